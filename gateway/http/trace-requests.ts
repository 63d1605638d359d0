/**
 * Each request's server span (tracing on only; server.ts registers nothing otherwise): started as the
 * request arrives, under the caller's traceparent or X-Amzn-Trace-Id; made the active context for the
 * handler, so that everything the handler starts (routing, the pool, the engines' round trips) hangs
 * under it; ended with the answer's status once it has gone.
 */
import type { FastifyInstance } from "fastify";
import type { RequestTrace } from "../tracing/request-trace.js";
import type { GatewayTracing } from "../observability/tracing.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The request's trace: undefined with tracing off, and for a request neither sampled nor needing SQL comments. */
    trace: RequestTrace | undefined;
  }
}

export function registerTracing(app: FastifyInstance, tracing: GatewayTracing): void {
  app.decorateRequest("trace", undefined);
  app.addHook("onRequest", (request, _reply, done) => {
    request.trace = tracing.startRequest(request.method, request.routeOptions.url ?? "unmatched", request.url.split("?")[0] ?? "", request.headers);
    done();
  });
  // After authentication and body parsing: Fastify calls the handler from `done` in this same turn, so
  // the handler and every promise it chains run in the request's context.
  app.addHook("preHandler", (request, _reply, done) => {
    const requestTrace = request.trace;
    if (requestTrace === undefined) {
      done();
      return;
    }
    requestTrace.principal = request.caller.principal;
    tracing.run(requestTrace, done);
  });
  app.addHook("onResponse", (request, reply, done) => {
    const requestTrace = request.trace;
    if (requestTrace !== undefined) tracing.endRequest(requestTrace, reply.statusCode, request.observedOutcome);
    done();
  });
}
