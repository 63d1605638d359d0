/**
 * The header that carries a function's correlation id to the gateway, which logs it as
 * `correlationId` beside each request's own id (gateway/http/correlation-id.ts): the logger's
 * correlation id (the HTTP API's request id, the EventBridge event's id), else the invocation's id.
 * Each gateway request keeps an id of its own; this one ties them to the work that made them.
 */
import type { Logger } from "@aws-lambda-powertools/logger";
import type { Context } from "aws-lambda";

export const CORRELATION_ID_HEADER = "x-correlation-id";

export function correlationHeader(logger: Logger, context: Pick<Context, "awsRequestId">): Record<string, string> {
  const id = logger.getCorrelationId();
  return { [CORRELATION_ID_HEADER]: typeof id === "string" && id.length > 0 ? id : context.awsRequestId };
}
