/**
 * The error-code registry: every failure the gateway returns carries one of these codes.
 * Codes are stable and never reused; docs/error-codes.md is generated from this list (npm run docs) and a test fails when it drifts.
 */
import { z } from "zod";

/** One registry entry: the HTTP status, whether the caller may retry as-is, and a one-line summary. */
export interface ErrorCodeSpec {
  readonly status: number;
  readonly retryable: boolean;
  readonly summary: string;
}

export const ERROR_CODES = {
  INVALID_REQUEST: {
    status: 400,
    retryable: false,
    summary: "The request body does not match the schema (wrong types, unknown fields, missing sql, unknown cluster, timeoutMs above the maximum, more than limits.maxParams parameters).",
  },
  MALFORMED_JSON: { status: 400, retryable: false, summary: "The request body is not valid JSON." },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    retryable: false,
    summary: "The request body is not application/json.",
  },
  ROUTE_NOT_FOUND: { status: 404, retryable: false, summary: "No such path or method." },
  REQUEST_TOO_LARGE: {
    status: 413,
    retryable: false,
    summary: "The request body exceeds server.maxRequestBytes.",
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    retryable: false,
    summary: "The request's headers exceed the server's limit (16 KiB); nothing ran.",
  },
  RESULT_TOO_LARGE: {
    status: 413,
    retryable: false,
    summary: "The result exceeds limits.maxResultBytes or limits.maxResultRows; nothing is returned.",
  },
  DATABASE_ERROR: {
    status: 400,
    retryable: false,
    summary: "The database rejected the statement (syntax, constraint, permission...); see error.database.",
  },
  SERIALIZATION_FAILURE: {
    status: 409,
    retryable: true,
    summary:
      "A conflict (serialization failure 40001 — Aurora DSQL's OC000/OC001 among them —, deadlock 40P01, OC000, OC001; MySQL 1213, 1205) that persisted through the gateway's own retries, or that refused an interactive transaction's COMMIT: run the transaction again.",
  },
  STATEMENT_TIMEOUT: {
    status: 504,
    retryable: false,
    summary: "The statement ran past its timeout and was cancelled on the server; it had no effect.",
  },
  OUTCOME_UNKNOWN: {
    status: 502,
    retryable: false,
    summary:
      "The connection died after the statement (or COMMIT) was sent, or the server answered it just as it was cancelled at its deadline: it may or may not have been applied. Never retried by the gateway.",
  },
  CONNECTION_LOST: {
    status: 503,
    retryable: true,
    summary: "The connection died before anything was committed (inside a transaction or batch): nothing was applied.",
  },
  POOL_TIMEOUT: {
    status: 503,
    retryable: true,
    summary: "No connection became free within pool.acquireTimeoutMs; the message states the pool's condition.",
  },
  DATABASE_UNAVAILABLE: {
    status: 503,
    retryable: true,
    summary: "The gateway could not open a connection to the database within pool.acquireTimeoutMs.",
  },
  DATABASE_RESUMING: {
    status: 503,
    retryable: true,
    summary:
      "The cluster was idle (clusters.<name>.idleToZero) and its database is resuming from a pause; the request's deadline ended first. Nothing ran; retry after Retry-After.",
  },
  PRIMARY_UNAVAILABLE: {
    status: 503,
    retryable: true,
    summary:
      "No primary accepted the write within topology.failoverWaitMs (a failover is in progress); nothing was applied.",
  },
  GATEWAY_DRAINING: {
    status: 503,
    retryable: true,
    summary: "The gateway is shutting down and accepts no new work; retry against another instance.",
  },
  TRANSACTION_NOT_FOUND: {
    status: 404,
    retryable: false,
    summary: "The transaction id is unknown (never issued, or already committed or rolled back; the message says which when the gateway remembers).",
  },
  TRANSACTION_EXPIRED: {
    status: 404,
    retryable: false,
    summary: "The transaction was rolled back by the gateway after its idle timeout or maximum age.",
  },
  TRANSACTION_BUSY: {
    status: 409,
    retryable: true,
    summary: "Another statement of the same transaction is still running; transactions run one statement at a time.",
  },
  TRANSACTION_ABORTED: {
    status: 409,
    retryable: false,
    summary:
      "The transaction was rolled back, by the database (a conflict inside it, COMMIT after a failed statement), because its connection was lost, or because the database refused a read-only principal's write in it; the message says why; run it again from the start.",
  },
  TOO_MANY_TRANSACTIONS: {
    status: 503,
    retryable: true,
    summary: "transactions.maxOpen interactive transactions are already open, or the principal's open transactions already pin its maxTransactionShare of the pool.",
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    retryable: false,
    summary:
      "The idempotencyKey was already used by this principal for a different request (another SQL, parameters, cluster or transaction) within its time to live; nothing ran.",
  },
  IDEMPOTENCY_UNAVAILABLE: {
    status: 503,
    retryable: true,
    summary:
      "The cluster's idempotency table is missing and its read-write login may not create it, or that login lacks a grant on it (the message names the grant; schemas/grants/<engine>.sql makes both); nothing ran. Also refuses the gateway's start.",
  },
  UNAUTHENTICATED: {
    status: 401,
    retryable: false,
    summary:
      "No valid caller identity: the x-poolgate-auth (or Authorization) header is missing, malformed, expired, bound to another gateway, or refused by STS.",
  },
  FORBIDDEN: {
    status: 403,
    retryable: false,
    summary:
      "The caller's principal may not do this: no grant on the cluster, anything but a known read by a read-only principal (a write, SET, DO, CALL, transaction control, a volatile built-in, a named lock...), an operator route without admin, or another principal's transaction.",
  },
  THROTTLED: {
    status: 429,
    retryable: true,
    summary: "The principal already has its maxInFlight requests in the gateway; nothing ran.",
  },
  AUTHENTICATION_UNAVAILABLE: {
    status: 503,
    retryable: true,
    summary: "The caller's identity could not be checked (STS or the token store did not answer in time); nothing ran.",
  },
  INTERNAL_ERROR: {
    status: 500,
    retryable: false,
    summary: "A bug in the gateway; the details are logged under the request id, not sent.",
  },
} as const satisfies Record<string, ErrorCodeSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;
export const errorCodeSchema = z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]);

/** The database's own account of a failure, kept across the HTTP hop. */
export const databaseErrorSchema = z.object({
  sqlstate: z.string().describe("SQLSTATE, e.g. 23505"),
  message: z.string(),
  detail: z.string().optional(),
  hint: z.string().optional(),
  constraint: z.string().optional(),
  table: z.string().optional(),
  column: z.string().optional(),
  schema: z.string().optional(),
  position: z.number().int().optional().describe("1-based character offset in the SQL"),
  engineCode: z.number().int().optional().describe("Engine-specific numeric code (MySQL error number)"),
});
export type DatabaseErrorInfo = z.infer<typeof databaseErrorSchema>;

/** Pool condition at the moment of a failure. */
export const poolStateSchema = z.object({
  total: z.number().int(),
  active: z.number().int(),
  idle: z.number().int(),
  waiting: z.number().int(),
});
export type PoolState = z.infer<typeof poolStateSchema>;

export const errorBodySchema = z.object({
  error: z.object({
    code: errorCodeSchema,
    message: z.string(),
    retryable: z.boolean(),
    requestId: z.string(),
    database: databaseErrorSchema.optional(),
    pool: poolStateSchema.optional(),
    attempts: z.number().int().optional().describe("How many times the gateway ran the work"),
    issues: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .describe("Validation problems, for INVALID_REQUEST"),
  }),
});
export type ErrorBody = z.infer<typeof errorBodySchema>;
