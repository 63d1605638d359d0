/**
 * Answers requests that Node's HTTP parser refused before any route saw them (headers over the limit,
 * malformed request lines), in the gateway's error format and with the Data API's error header, so
 * both the native client and the AWS SDK can read them. The connection is closed after the answer.
 */
import { randomUUID } from "node:crypto";
import type { Socket } from "node:net";
import { STATUS_CODES } from "node:http";
import { GatewayError } from "../errors.js";
import { errorBody } from "./error-handler.js";

/** Node's parser codes (not the registry's) read here: what the parser refused. */
function refusalOf(error: Error & { code?: string }): GatewayError {
  if (error.code === "HPE_HEADER_OVERFLOW") return new GatewayError("HEADERS_TOO_LARGE", "the request's headers exceed the server's limit (16 KiB)");
  return new GatewayError("INVALID_REQUEST", error.code === "ERR_HTTP_REQUEST_TIMEOUT" ? "the request did not arrive in time" : "malformed HTTP request");
}

export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  if (!socket.writable) {
    socket.destroy(error);
    return;
  }
  const refusal = refusalOf(error);
  const requestId = randomUUID();
  const body = JSON.stringify(errorBody(refusal, requestId));
  const head = [
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? "Error"}`,
    "Content-Type: application/json; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close",
    `x-request-id: ${requestId}`,
    `x-amzn-RequestId: ${requestId}`,
    "x-amzn-ErrorType: BadRequestException",
  ];
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
}
