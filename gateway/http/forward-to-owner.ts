/**
 * Sends a call on an interactive transaction owned by another gateway task (see
 * peers/transaction-ownership.ts) to that task, and answers with its answer as it is. Applies to the
 * native API (/v1/query with transactionId, /v1/transactions/:id/commit|rollback) and the Data API
 * (/Execute, /BatchExecute, /CommitTransaction, /RollbackTransaction). A forwarded call is never
 * forwarded again.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { request as undiciRequest } from "undici";
import { AUTH_HEADER } from "../auth/authenticator.js";
import type { TransactionOwnership } from "../peers/transaction-ownership.js";
import { CORRELATION_ID_HEADER } from "./correlation-id.js";
import { DATA_API_IDEMPOTENCY_HEADER, IDEMPOTENCY_HEADER, REPLAY_HEADER } from "./idempotency-header.js";

const FORWARDED = "x-poolgate-forwarded";
const NATIVE_END = /^\/v1\/transactions\/([^/?]+)\/(?:commit|rollback)(?:\?|$)/;
const BODY_ROUTES = new Set(["/v1/query", "/Execute", "/BatchExecute", "/CommitTransaction", "/RollbackTransaction"]);
/** Answer headers worth passing back. */
const KEPT = ["content-type", "retry-after", "x-request-id", "x-amzn-requestid", "x-amzn-errortype", REPLAY_HEADER];

function transactionIdOf(request: FastifyRequest): string | undefined {
  const path = request.url.split("?")[0] ?? "";
  const native = NATIVE_END.exec(request.url);
  if (native?.[1]) return decodeURIComponent(native[1]);
  if (!BODY_ROUTES.has(path)) return undefined;
  const body = request.body as { transactionId?: unknown } | undefined;
  return typeof body?.transactionId === "string" ? body.transactionId : undefined;
}

export function registerOwnerForwarding(app: FastifyInstance, ownership: TransactionOwnership): void {
  app.addHook("preHandler", async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method !== "POST" || request.headers[FORWARDED] !== undefined) return;
    const id = transactionIdOf(request);
    const owner = id === undefined ? undefined : ownership.foreignOwner(id);
    if (owner === undefined) return;
    const headers: Record<string, string> = { [FORWARDED]: "1", "x-request-id": request.id };
    if (request.body !== undefined) headers["content-type"] = "application/json";
    // The owner checks the caller again: the credential travels with the call (and the owner's log
    // names the caller's correlation id too).
    for (const name of ["authorization", AUTH_HEADER, "x-poolgate-extensions", IDEMPOTENCY_HEADER, DATA_API_IDEMPOTENCY_HEADER, CORRELATION_ID_HEADER]) {
      const value = request.headers[name];
      if (typeof value === "string") headers[name] = value;
    }
    // Forwarding failures are answered here: the owner is unreachable, so its transaction is out of reach.
    const response = await undiciRequest(owner + request.url, {
      method: "POST",
      headers,
      // The caller's own text: re-serialising the parsed body would round large numbers in it.
      body: request.body === undefined ? undefined : (request.bodyText ?? JSON.stringify(request.body)),
    }).catch(() => undefined);
    if (!response) {
      request.log?.warn?.({ owner }, "transaction owner unreachable");
      return; // answered locally: the id is unknown here (TRANSACTION_NOT_FOUND)
    }
    const text = await response.body.text();
    for (const name of KEPT) {
      const value = response.headers[name];
      if (typeof value === "string") reply.header(name, value);
    }
    return reply.code(response.statusCode).send(text);
  });
}
