/**
 * The one place where any thrown error becomes an HTTP status and a JSON error body. Unknown errors
 * become INTERNAL_ERROR: logged in full under the request id, never sent.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import type { ErrorBody } from "../../schemas/errors.js";
import { GatewayError } from "../errors.js";
import { meaningOf } from "../execution/failure.js";
import type { Logger } from "../logger.js";
import { correlationIdOf } from "./correlation-id.js";
import { noteOutcome } from "./observe.js";

/** Fastify's own request-parsing failures, by their stable codes. */
const FASTIFY_CODES: Record<string, (err: FastifyError) => GatewayError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new GatewayError("REQUEST_TOO_LARGE", "request body exceeds server.maxRequestBytes"),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new GatewayError("UNSUPPORTED_MEDIA_TYPE", "send the body as JSON with content-type: application/json"),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new GatewayError("INVALID_REQUEST", "content-length does not match the body"),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new GatewayError("INVALID_REQUEST", "the JSON body is empty"),
  FST_ERR_CTP_INVALID_JSON_BODY: (err) => new GatewayError("MALFORMED_JSON", `request body is not valid JSON: ${err.message}`),
};

export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const fastifyError = err as Partial<FastifyError>;
  if (typeof fastifyError.code === "string") {
    const mapped = FASTIFY_CODES[fastifyError.code];
    if (mapped) return mapped(err as FastifyError);
  }
  // Body parse failures (JSON syntax, prototype poisoning) arrive as 400s without one of the codes above.
  if (fastifyError.statusCode === 400 && err instanceof Error) {
    return new GatewayError("MALFORMED_JSON", `request body is not valid JSON: ${err.message}`, { cause: err });
  }
  return new GatewayError("INTERNAL_ERROR", "internal error; see the gateway log for this request id", { cause: err });
}

export function errorBody(error: GatewayError, requestId: string): ErrorBody {
  const body: ErrorBody = { error: { code: error.code, message: error.message, retryable: error.retryable, requestId } };
  if (error.database) body.error.database = error.database;
  if (error.pool) body.error.pool = error.pool;
  if (error.attempts !== undefined) body.error.attempts = error.attempts;
  if (error.issues) body.error.issues = error.issues;
  return body;
}

/**
 * What the log keeps of a failure: bugs in full (under the request id, never sent), server-side
 * failures and refused access (who, and why) as warnings. Never a credential or a parameter value.
 */
export function logFailure(error: GatewayError, original: unknown, request: FastifyRequest, logger: Logger): void {
  const { kind } = meaningOf(error);
  if (kind === "bug") {
    logger.error({ err: error.cause ?? original, requestId: request.id, correlationId: correlationIdOf(request), principal: request.caller?.principal, route: request.routeOptions.url ?? "(none)" }, "unhandled error");
  } else if (error.status >= 500) {
    logger.warn({ code: error.code, requestId: request.id, correlationId: correlationIdOf(request), principal: request.caller?.principal, message: error.message }, "request failed");
  } else if (kind === "access") {
    logger.warn({ code: error.code, requestId: request.id, correlationId: correlationIdOf(request), principal: request.caller?.principal, message: error.message }, "access refused");
  }
}

export function replyWithError(err: unknown, request: FastifyRequest, reply: FastifyReply, logger: Logger): FastifyReply {
  const error = toGatewayError(err);
  noteOutcome(request, error.code);
  logFailure(error, err, request, logger);
  if (error.status === 503 || error.status === 429) reply.header("retry-after", String(error.retryAfterS ?? 1));
  // Set here too: Fastify's own refusals (frameworkErrors) are sent without the onSend hooks.
  return reply.code(error.status).header("x-request-id", request.id).send(errorBody(error, request.id));
}
