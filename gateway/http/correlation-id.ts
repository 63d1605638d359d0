/**
 * The caller's correlation id: `x-correlation-id`, the id a caller's own logs use for the work a
 * request is part of (a Lambda's Powertools correlation id: the API Gateway request that invoked
 * it). The gateway logs it beside its own request id, so one search finds the caller's lines and
 * the gateway's for one piece of work; it is never used for anything else. Ids that are not short
 * printable tokens are left out rather than logged.
 */
import type { FastifyRequest } from "fastify";

export const CORRELATION_ID_HEADER = "x-correlation-id";

/** API Gateway's request ids are base64 (`JmIzLgfqIAMEMhw=`), Lambda's are UUIDs, X-Ray's `Root=1-...`. */
const CORRELATION_ID = /^[A-Za-z0-9._:/=+-]{1,128}$/;

export function correlationIdOf(request: Pick<FastifyRequest, "headers">): string | undefined {
  const value = request.headers[CORRELATION_ID_HEADER];
  return typeof value === "string" && CORRELATION_ID.test(value) ? value : undefined;
}
