/**
 * A scope for a surface that speaks another service's HTTP protocol (Neon's, PlanetScale's): its
 * drivers post JSON under any content-type label, and every failure is answered in that protocol's
 * error shape, counted and logged as on the native surface.
 */
import type { FastifyInstance } from "fastify";
import type { GatewayError } from "../../errors.js";
import { jsonBodyReader } from "../body-reader.js";
import type { HttpContext } from "../context.js";
import { logFailure, toGatewayError } from "../error-handler.js";
import { noteOutcome } from "../observe.js";

/** A failure in the protocol's terms: the HTTP status and the JSON body its driver reads. */
export type ProtocolErrorAnswer = (error: GatewayError) => { status: number; body: unknown };

export function registerProtocolScope(
  app: FastifyInstance,
  context: HttpContext,
  errorAnswer: ProtocolErrorAnswer,
  routes: (scope: FastifyInstance) => void,
): void {
  void app.register((scope, _options, done) => {
    // The drivers post their JSON body as a string (fetch labels it text/plain): any label is read as JSON.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", jsonBodyReader(context.config.server.maxRequestBytes));
    scope.setErrorHandler((err, request, reply) => {
      const error = toGatewayError(err);
      noteOutcome(request, error.code);
      logFailure(error, err, request, context.logger);
      const { status, body } = errorAnswer(error);
      if (error.status === 503 || error.status === 429) void reply.header("retry-after", String(error.retryAfterS ?? 1));
      return reply.code(status).header("x-request-id", request.id).type("application/json").send(JSON.stringify(body));
    });
    routes(scope);
    done();
  });
}
