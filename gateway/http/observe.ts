/**
 * What each request is counted and logged by: the routes note its cluster and intent, the error
 * handlers its outcome (the registry code, or the Data API exception), and when the answer has gone the
 * request is counted in the metrics and, with `log.requests`, logged as one line (request id, the
 * caller's correlation id, route, status, time, principal, cluster, outcome — never a parameter or a
 * credential).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Logger } from "../logger.js";
import type { GatewayMetrics } from "../observability/metrics.js";
import { correlationIdOf } from "./correlation-id.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The cluster the request's work went to ("none" until a route names it). */
    observedCluster: string;
    /** The work's intent: read, write, transaction... ("none" until a route names it). */
    observedIntent: string;
    /** The failure's registry code (set by the error handlers); undefined when the answer is a success. */
    observedOutcome: string | undefined;
  }
}

/** Notes the cluster and intent of the work a request asked for. */
export function noteWork(request: FastifyRequest, cluster: string, intent: string): void {
  request.observedCluster = cluster;
  request.observedIntent = intent;
}

/**
 * Runs work that notes its cluster and intent in a note of its own as it goes (the Data API service's
 * WorkNote), and notes them on the request when the work ends, failed or not.
 */
export async function observedWork<T>(request: FastifyRequest, work: (note: { cluster: string; intent: string }) => Promise<T>): Promise<T> {
  const note = { cluster: request.observedCluster, intent: request.observedIntent };
  try {
    return await work(note);
  } finally {
    noteWork(request, note.cluster, note.intent);
  }
}

/** Notes how a request failed (set by the error handlers). */
export function noteOutcome(request: FastifyRequest, outcome: string): void {
  request.observedOutcome = outcome;
}

export function registerObservation(app: FastifyInstance, metrics: GatewayMetrics, logger: Logger, logRequests: boolean): void {
  // Primitive decorations: Fastify sets them on every request as it builds it (refused ones included),
  // so no hook and no object per request is needed to start the observation.
  app.decorateRequest("observedCluster", "none");
  app.decorateRequest("observedIntent", "none");
  app.decorateRequest("observedOutcome", undefined);
  app.addHook("onResponse", (request, reply, done) => {
    // Fastify times every request itself (from its routing to the answer's end): read, not timed twice.
    const seconds = reply.elapsedTime / 1000;
    const status = reply.statusCode;
    const outcome = request.observedOutcome ?? (status < 400 ? "ok" : `HTTP_${status}`);
    // One read: Fastify builds routeOptions afresh on every access.
    const { url, config } = request.routeOptions;
    const route = url ?? "unmatched";
    const fromCaller = (config?.access ?? "caller") === "caller";
    metrics.observeRequest({ route, cluster: request.observedCluster, intent: request.observedIntent, outcome }, status, seconds, fromCaller);
    if (logRequests) {
      logger.info(
        {
          requestId: request.id,
          correlationId: correlationIdOf(request),
          method: request.method,
          route,
          status,
          ms: Math.round(seconds * 10000) / 10,
          principal: request.caller?.principal,
          cluster: request.observedCluster,
          intent: request.observedIntent,
          outcome,
        },
        "request",
      );
    }
    done();
  });
}
