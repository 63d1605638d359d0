/**
 * What each request is counted and logged by: the routes note its cluster and intent, the error
 * handlers its outcome (the registry code, or the Data API exception), and when the answer has gone the
 * request is counted in the metrics and, with `log.requests`, logged as one line (request id, route,
 * status, time, principal, cluster, outcome — never a parameter or a credential).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Logger } from "../logger.js";
import type { GatewayMetrics } from "../observability/metrics.js";

export interface RequestObservation {
  cluster: string;
  intent: string;
  /** The failure's code; "ok" when the answer is a success. */
  outcome: string | undefined;
}

declare module "fastify" {
  interface FastifyRequest {
    observation: RequestObservation;
  }
}

/** Notes the cluster and intent of the work a request asked for. */
export function noteWork(request: FastifyRequest, cluster: string, intent: string): void {
  request.observation.cluster = cluster;
  request.observation.intent = intent;
}

/** Notes how a request failed (set by the error handlers). */
export function noteOutcome(request: FastifyRequest, outcome: string): void {
  const observation = request.observation as RequestObservation | null;
  if (observation) observation.outcome = outcome;
}

export function registerObservation(app: FastifyInstance, metrics: GatewayMetrics, logger: Logger, logRequests: boolean): void {
  app.decorateRequest("observation", null as unknown as RequestObservation);
  app.addHook("onRequest", (request, _reply, done) => {
    request.observation = { cluster: "none", intent: "none", outcome: undefined };
    done();
  });
  app.addHook("onResponse", (request, reply, done) => {
    // Requests Fastify refused before the hooks ran (a malformed URL) have no observation yet.
    const observation = (request.observation as RequestObservation | null) ?? { cluster: "none", intent: "none", outcome: undefined };
    // Fastify times every request itself (from its routing to the answer's end): read, not timed twice.
    const seconds = reply.elapsedTime / 1000;
    const status = reply.statusCode;
    const outcome = observation.outcome ?? (status < 400 ? "ok" : `HTTP_${status}`);
    // One read: Fastify builds routeOptions afresh on every access.
    const { url, config } = request.routeOptions;
    const route = url ?? "unmatched";
    const fromCaller = (config?.access ?? "caller") === "caller";
    metrics.observeRequest({ route, cluster: observation.cluster, intent: observation.intent, outcome }, status, seconds, fromCaller);
    if (logRequests) {
      logger.info(
        {
          requestId: request.id,
          method: request.method,
          route,
          status,
          ms: Math.round(seconds * 10000) / 10,
          principal: request.caller?.principal,
          cluster: observation.cluster,
          intent: observation.intent,
          outcome,
        },
        "request",
      );
    }
    done();
  });
}
