/**
 * The gateway's wire types as the client sees them: plain TypeScript, so the published package needs
 * neither zod nor the gateway's `schemas/`. They describe the same JSON as the schemas do; the
 * repository's type check (client/wire.test.ts) fails when the two drift apart.
 */

/**
 * A statement parameter. null, booleans, numbers and strings bind as themselves (send int8 and numeric
 * as strings to keep precision); arrays bind as PostgreSQL arrays (MySQL: JSON text); other objects
 * bind as JSON, from the request's own text; `{ $json: "<JSON text>" }` binds that text as it is (the
 * way to send numbers a JavaScript double cannot hold); `{ $bytea: "<base64>" }` binds bytes.
 */
export type Param = null | boolean | number | string | { $bytea: string } | { $json: string } | unknown[] | Record<string, unknown>;

/** Where to run: a replica (read) or the primary (write). */
export type Intent = "read" | "write";

export type Isolation = "read committed" | "repeatable read" | "serializable";

/** A result column: its name and the database's type name (int4, text, jsonb, _int4; bigint, varchar, json). */
export interface Column {
  name: string;
  type: string;
}

/** One statement's result as the gateway answers it. */
export interface WireQueryResult {
  command: string;
  columns: Column[];
  rows: (unknown[] | Record<string, unknown>)[];
  rowCount: number | null;
  lastInsertId?: string | undefined;
}

/** How a read that asked for the result cache was answered. */
export type CacheOutcome = "hit" | "miss" | "stale" | "bypass";

export interface QueryResponse extends WireQueryResult {
  attempts: number;
  consistencyToken?: string | undefined;
  /** The answer recorded under the request's idempotency key, sent again: nothing ran this time. */
  replayed?: true | undefined;
  /** Set when the request asked for the result cache. */
  cache?: CacheOutcome | undefined;
}

export interface BatchResponse {
  results: WireQueryResult[];
  attempts: number;
  consistencyToken?: string | undefined;
  replayed?: true | undefined;
}

/** The first line of a streamed result (POST /v1/query/stream). */
export interface StreamHeader {
  columns: Column[];
}

/** The last line of a stream that ended cleanly. */
export interface StreamEnd {
  command: string;
  rowCount: number | null;
  attempts: number;
}

export interface BeginResponse {
  transactionId: string;
  idleTimeoutMs: number;
  expiresAt: string;
}

export interface EndTransactionResponse {
  transactionId: string;
  outcome: "committed" | "rolled back";
  consistencyToken?: string | undefined;
  replayed?: true | undefined;
}

/** The gateway's error codes (see docs/error-codes.md). */
export type ErrorCode =
  | "INVALID_REQUEST"
  | "MALFORMED_JSON"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "ROUTE_NOT_FOUND"
  | "REQUEST_TOO_LARGE"
  | "HEADERS_TOO_LARGE"
  | "RESULT_TOO_LARGE"
  | "DATABASE_ERROR"
  | "SERIALIZATION_FAILURE"
  | "STATEMENT_TIMEOUT"
  | "OUTCOME_UNKNOWN"
  | "CONNECTION_LOST"
  | "POOL_TIMEOUT"
  | "DATABASE_UNAVAILABLE"
  | "DATABASE_RESUMING"
  | "PRIMARY_UNAVAILABLE"
  | "GATEWAY_DRAINING"
  | "TRANSACTION_NOT_FOUND"
  | "TRANSACTION_EXPIRED"
  | "TRANSACTION_BUSY"
  | "TRANSACTION_ABORTED"
  | "TOO_MANY_TRANSACTIONS"
  | "IDEMPOTENCY_KEY_REUSED"
  | "IDEMPOTENCY_UNAVAILABLE"
  | "UNAUTHENTICATED"
  | "FORBIDDEN"
  | "THROTTLED"
  | "AUTHENTICATION_UNAVAILABLE"
  | "INTERNAL_ERROR";

/** The database's own account of a failure, kept across the HTTP hop. */
export interface DatabaseErrorInfo {
  /** SQLSTATE, e.g. 23505. */
  sqlstate: string;
  message: string;
  detail?: string | undefined;
  hint?: string | undefined;
  constraint?: string | undefined;
  table?: string | undefined;
  column?: string | undefined;
  schema?: string | undefined;
  /** 1-based character offset in the SQL. */
  position?: number | undefined;
  /** Engine-specific numeric code (MySQL error number). */
  engineCode?: number | undefined;
}

/** The gateway's JSON error body. */
export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    retryable: boolean;
    requestId: string;
    database?: DatabaseErrorInfo | undefined;
    pool?: { total: number; active: number; idle: number; waiting: number } | undefined;
    attempts?: number | undefined;
    issues?: { path: string; message: string }[] | undefined;
  };
}
