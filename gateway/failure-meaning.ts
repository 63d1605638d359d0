/**
 * What each registry code means with no context, the first half of the failure model (the second,
 * an attempt's outcome in its context, is execution/failure.ts): was anything applied (no / maybe /
 * yes), does the gateway run the work again and how soon, what kind of failure it is; and the
 * questions every layer asks of a failure (the database refused the statement, the session was lost,
 * the idempotency record cannot be used), answered from that meaning. It sits beside the error class
 * so that the engines and the idempotency record, below execution, ask it too: nowhere else compares
 * error codes. A table test holds it (execution/failure.test.ts).
 */
import type { ErrorCode } from "../schemas/errors.js";
import { GatewayError } from "./errors.js";

/** Whether the failed work changed the database: certainly not, perhaps, or it did (and only its answer failed). */
export type Applied = "no" | "maybe" | "yes";
/** What the gateway's own retry does: run the work again at once, after a backoff (a conflict), or not at all. */
export type Retry = "now" | "back off" | "never";
/**
 * What kind of failure a code is: the caller's request, refused access, the database's refusal of the
 * statement, its timeout, a conflict, a session lost, no session or instance to be had, the state of an interactive
 * transaction, or a bug.
 */
export type FailureKind = "request" | "access" | "database" | "timeout" | "conflict" | "lost" | "unavailable" | "transaction" | "bug";

/** A code's meaning with no context: as it reaches retry, a surface or the log. */
export interface Meaning {
  readonly code: ErrorCode;
  readonly kind: FailureKind;
  readonly applied: Applied;
  readonly retry: Retry;
}

const never = (kind: FailureKind, applied: Applied = "no") => ({ kind, applied, retry: "never" }) as const;

/** Every registry code's meaning (a Record over ErrorCode: a new code does not compile until it has one). */
const MEANINGS: Record<ErrorCode, Omit<Meaning, "code">> = {
  INVALID_REQUEST: never("request"),
  MALFORMED_JSON: never("request"),
  UNSUPPORTED_MEDIA_TYPE: never("request"),
  ROUTE_NOT_FOUND: never("request"),
  REQUEST_TOO_LARGE: never("request"),
  HEADERS_TOO_LARGE: never("request"),
  // The statement ran; only its answer was too large to send.
  RESULT_TOO_LARGE: never("request", "maybe"),
  DATABASE_ERROR: never("database"),
  // The database rolled the unit back: back off, then run it again.
  SERIALIZATION_FAILURE: { kind: "conflict", applied: "no", retry: "back off" },
  // Cancelled on the server at its deadline: it had no effect.
  STATEMENT_TIMEOUT: never("timeout"),
  OUTCOME_UNKNOWN: never("lost", "maybe"),
  // Nothing was applied and the cause is gone or elsewhere now.
  CONNECTION_LOST: { kind: "lost", applied: "no", retry: "now" },
  PRIMARY_UNAVAILABLE: { kind: "unavailable", applied: "no", retry: "now" },
  POOL_TIMEOUT: never("unavailable"),
  DATABASE_UNAVAILABLE: never("unavailable"),
  DATABASE_RESUMING: never("unavailable"),
  GATEWAY_DRAINING: never("unavailable"),
  TOO_MANY_TRANSACTIONS: never("unavailable"),
  IDEMPOTENCY_UNAVAILABLE: never("unavailable"),
  AUTHENTICATION_UNAVAILABLE: never("unavailable"),
  TRANSACTION_NOT_FOUND: never("transaction"),
  TRANSACTION_EXPIRED: never("transaction"),
  TRANSACTION_BUSY: never("transaction"),
  TRANSACTION_ABORTED: never("transaction"),
  IDEMPOTENCY_KEY_REUSED: never("request"),
  UNAUTHENTICATED: never("access"),
  FORBIDDEN: never("access"),
  THROTTLED: never("access"),
  INTERNAL_ERROR: never("bug", "maybe"),
};

/** What any thrown value means with no context: a GatewayError by its code (a final one is never retried), anything else a bug. */
export function meaningOf(err: unknown): Meaning {
  if (!(err instanceof GatewayError)) return MEANING_OF_BUG;
  const meaning = MEANINGS[err.code];
  return { code: err.code, kind: meaning.kind, applied: meaning.applied, retry: err.final ? "never" : meaning.retry };
}

const MEANING_OF_BUG: Meaning = Object.freeze({ code: "INTERNAL_ERROR", ...MEANINGS.INTERNAL_ERROR });

/** The registry code's meaning, for a surface that has only the code. */
export function meaningOfCode(code: ErrorCode): Meaning {
  return { code, ...MEANINGS[code] };
}

/** The session the work ran on is gone: lost after the work was sent (outcome unknown) or before anything was committed. */
export function sessionLost(err: unknown): boolean {
  return meaningOf(err).kind === "lost";
}

/** The instance refused a write because it is read-only (a demoted primary, a replica): nothing was applied. */
export function isReadOnlyRefusal(err: unknown): boolean {
  return err instanceof GatewayError && err.refusedAsReadOnly && meaningOf(err).kind === "database";
}

/** A statement the database refused (syntax, constraint, a failed transaction): the instance answered. */
export function isDatabaseRefusal(err: unknown): boolean {
  return meaningOf(err).kind === "database";
}

/** An unknown outcome: the work may have been applied (a keyed write's attempt remembers it). */
export function outcomeUnknown(err: unknown): boolean {
  const meaning = meaningOf(err);
  return meaning.kind === "lost" && meaning.applied === "maybe";
}

/** No pooled session became free before the wait's deadline. */
export function waitedOutForSession(err: unknown): boolean {
  return err instanceof GatewayError && err.code === "POOL_TIMEOUT";
}

/**
 * The idempotency record cannot be used as it is (IDEMPOTENCY_UNAVAILABLE: missing and not to be
 * created, or out of the login's reach): the operator's to fix, unlike a database that could not be asked.
 */
export function isIdempotencyUnavailable(err: unknown): boolean {
  return err instanceof GatewayError && err.code === "IDEMPOTENCY_UNAVAILABLE";
}

/** Codes that say an interactive transaction is over (never begun or forgotten, expired, ended by a failure). */
const TRANSACTION_OVER: ReadonlySet<ErrorCode> = new Set<ErrorCode>(["TRANSACTION_NOT_FOUND", "TRANSACTION_EXPIRED", "TRANSACTION_ABORTED"]);

/** The interactive transaction is over already: a rollback has nothing left to undo. */
export function transactionIsOver(err: unknown): boolean {
  return err instanceof GatewayError && TRANSACTION_OVER.has(err.code);
}
