/**
 * The idempotency key on the wire: `idempotencyKey` in a native body or the `Idempotency-Key` header
 * (the Data API surface reads `x-poolgate-idempotency-key`, which an AWS SDK middleware can add), and
 * the recorded answer sent back: the native envelope gains `attempts`, the consistency token and
 * `"replayed": true`; every replayed answer carries `x-poolgate-idempotent-replay: true`.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { idempotencyKeySchema } from "../../schemas/query.js";
import { GatewayError } from "../errors.js";
import type { RecordedAnswer } from "../idempotency/keyed-work.js";

export const IDEMPOTENCY_HEADER = "idempotency-key";
export const DATA_API_IDEMPOTENCY_HEADER = "x-poolgate-idempotency-key";
export const REPLAY_HEADER = "x-poolgate-idempotent-replay";

/** The request's key from `header` or the body's field; both given must agree. */
export function idempotencyKeyOf(request: FastifyRequest, fromBody: string | undefined, header = IDEMPOTENCY_HEADER): string | undefined {
  const raw = request.headers[header];
  if (raw === undefined) return fromBody;
  const parsed = idempotencyKeySchema.safeParse(Array.isArray(raw) ? raw[0] : raw);
  if (!parsed.success) {
    throw new GatewayError("INVALID_REQUEST", `invalid request: the ${header} header: ${parsed.error.issues[0]?.message ?? "not a key"}`, {
      issues: [{ path: header, message: parsed.error.issues[0]?.message ?? "not a key" }],
    });
  }
  if (fromBody !== undefined && fromBody !== parsed.data) {
    throw new GatewayError("INVALID_REQUEST", `invalid request: the ${header} header and idempotencyKey differ`, {
      issues: [{ path: "idempotencyKey", message: `differs from the ${header} header` }],
    });
  }
  return parsed.data;
}

/** A native answer: the recorded JSON object with `attempts`, the consistency token and `replayed` added. */
export function nativeAnswer(reply: FastifyReply, recorded: RecordedAnswer, extras: { attempts?: number; consistencyToken?: string | undefined }): FastifyReply {
  const attempts = extras.attempts === undefined ? "" : `,"attempts":${extras.attempts}`;
  const token = extras.consistencyToken === undefined ? "" : `,"consistencyToken":${JSON.stringify(extras.consistencyToken)}`;
  const replayed = recorded.replayed ? ',"replayed":true' : "";
  if (recorded.replayed) void reply.header(REPLAY_HEADER, "true");
  return reply.type("application/json; charset=utf-8").send(`${recorded.answer.slice(0, -1)}${attempts}${token}${replayed}}`);
}
