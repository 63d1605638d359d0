/**
 * The client's error classes. Every failure the gateway reports becomes a {@link PoolgateError} (or a
 * subclass) carrying the gateway's registry code, HTTP status, retryability and request id; database
 * errors keep the SQLSTATE (or MySQL error number), detail and constraint. Failures on the way to the
 * gateway are {@link TransportError}s; a call that ran out of its deadline is a {@link DeadlineExceededError}.
 */
import type { DatabaseErrorInfo, ErrorBody, ErrorCode } from "./wire.js";

/** A failure reported by the gateway. */
export class PoolgateError extends Error {
  /** The gateway's error code (see docs/error-codes.md). */
  readonly code: ErrorCode;
  /** HTTP status of the answer. */
  readonly status: number;
  /** Whether the same request may be sent again as it is (the gateway says so per code). */
  readonly retryable: boolean;
  /** The gateway's request id, for its logs. */
  readonly requestId: string;
  /** How many times the gateway itself ran the work, when it says. */
  readonly attempts: number | undefined;
  /** Validation problems (INVALID_REQUEST): the request's field and what is wrong with it. */
  readonly issues: readonly { path: string; message: string }[];

  constructor(status: number, body: ErrorBody["error"]) {
    super(body.message);
    this.name = "PoolgateError";
    this.code = body.code;
    this.status = status;
    this.retryable = body.retryable;
    this.requestId = body.requestId;
    this.attempts = body.attempts;
    this.issues = body.issues ?? [];
  }
}

/** The database rejected the statement: SQLSTATE, engine code, detail and constraint are kept. */
export class DatabaseError extends PoolgateError {
  /** The database's own account (SQLSTATE, message, detail, constraint, MySQL error number...). */
  readonly database: DatabaseErrorInfo;

  constructor(status: number, body: ErrorBody["error"], database: DatabaseErrorInfo) {
    super(status, body);
    this.name = "DatabaseError";
    this.database = database;
  }

  /** SQLSTATE, e.g. "23505" (PostgreSQL) or "23000" (MySQL). */
  get sqlstate(): string {
    return this.database.sqlstate;
  }

  /** MySQL's error number (1062...), undefined on PostgreSQL. */
  get engineCode(): number | undefined {
    return this.database.engineCode;
  }

  /** The violated constraint, when the database names it. */
  get constraint(): string | undefined {
    return this.database.constraint;
  }

  /** The database's detail line, when it gives one. */
  get detail(): string | undefined {
    return this.database.detail;
  }
}

/** The statement ran past its timeout and the gateway cancelled it on the server: it had no effect. */
export class StatementTimeoutError extends PoolgateError {
  constructor(status: number, body: ErrorBody["error"]) {
    super(status, body);
    this.name = "StatementTimeoutError";
  }
}

/** The connection died after the statement was sent: it may or may not have been applied. Never retried. */
export class OutcomeUnknownError extends PoolgateError {
  constructor(status: number, body: ErrorBody["error"]) {
    super(status, body);
    this.name = "OutcomeUnknownError";
  }
}

/** The call's deadline passed before an answer came (or before it could be sent). */
export class DeadlineExceededError extends Error {
  /** Whether the request had been sent: if so, its outcome is unknown unless it was a read. */
  readonly sent: boolean;

  constructor(message: string, sent: boolean) {
    super(message);
    this.name = "DeadlineExceededError";
    this.sent = sent;
  }
}

/** The request did not reach the gateway, or its answer did not come back (network, DNS, closed socket). */
export class TransportError extends Error {
  /** The system or undici error code, e.g. ECONNREFUSED, UND_ERR_SOCKET. */
  readonly code: string | undefined;
  /** Whether the request certainly never reached the gateway (connection refused, DNS failure). */
  readonly notSent: boolean;

  constructor(message: string, code: string | undefined, notSent: boolean, cause: unknown) {
    super(message, { cause });
    this.name = "TransportError";
    this.code = code;
    this.notSent = notSent;
  }
}

/** The gateway's JSON error body as the matching error class. */
export function errorFromBody(status: number, body: ErrorBody): PoolgateError {
  const error = body.error;
  if (error.database && error.code === "DATABASE_ERROR") return new DatabaseError(status, error, error.database);
  if (error.code === "STATEMENT_TIMEOUT") return new StatementTimeoutError(status, error);
  if (error.code === "OUTCOME_UNKNOWN") return new OutcomeUnknownError(status, error);
  if (error.database) return new DatabaseError(status, error, error.database);
  return new PoolgateError(status, error);
}
