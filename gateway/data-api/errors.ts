/**
 * Gateway errors as the RDS Data API reports them: an exception name (sent as `x-amzn-ErrorType` and
 * as `code` in the body, so every SDK generation finds it), an HTTP status and a message. The rule the
 * AWS SDK imposes: it retries 5xx, so a 5xx is sent only when nothing ran; anything that may have run
 * is a 4xx. SQL errors keep the database's own text, in the form the service uses.
 */
import { DATA_API_EXCEPTIONS, type DataApiExceptionName } from "../../schemas/data-api.js";
import type { DatabaseErrorInfo, ErrorCode } from "../../schemas/errors.js";
import { GatewayError } from "../errors.js";
import { meaningOf } from "../execution/failure.js";

export interface DataApiError {
  name: DataApiExceptionName;
  status: number;
  message: string;
}

/** A failure the Data API surface reports with a name of its own (multi-statements, array parameters...). */
export class DataApiRefusal extends Error {
  constructor(
    readonly exception: DataApiExceptionName,
    message: string,
  ) {
    super(message);
    this.name = "DataApiRefusal";
  }
}

/** "ERROR: <msg>; Detail: …; Hint: …; Position: N; SQLState: X" (PostgreSQL) or "<msg>; Error code: N; SQLState: S" (MySQL). */
export function databaseMessage(database: DatabaseErrorInfo): string {
  if (database.engineCode !== undefined) return `${database.message}; Error code: ${database.engineCode}; SQLState: ${database.sqlstate}`;
  const parts = [`ERROR: ${database.message}`];
  if (database.detail) parts.push(`Detail: ${database.detail}`);
  if (database.hint) parts.push(`Hint: ${database.hint}`);
  if (database.position !== undefined) parts.push(`Position: ${database.position}`);
  parts.push(`SQLState: ${database.sqlstate}`);
  return parts.join("; ");
}

/** Registry code -> exception. Codes not listed are database-side failures reported as DatabaseErrorException. */
const BY_CODE: Partial<Record<ErrorCode, DataApiExceptionName>> = {
  INVALID_REQUEST: "BadRequestException",
  // Nothing ran: the key names another request.
  IDEMPOTENCY_KEY_REUSED: "BadRequestException",
  MALFORMED_JSON: "BadRequestException",
  UNSUPPORTED_MEDIA_TYPE: "BadRequestException",
  REQUEST_TOO_LARGE: "BadRequestException",
  HEADERS_TOO_LARGE: "BadRequestException",
  ROUTE_NOT_FOUND: "BadRequestException",
  RESULT_TOO_LARGE: "UnsupportedResultException",
  STATEMENT_TIMEOUT: "StatementTimeoutException",
  TRANSACTION_NOT_FOUND: "TransactionNotFoundException",
  TRANSACTION_EXPIRED: "TransactionNotFoundException",
  UNAUTHENTICATED: "AccessDeniedException",
  FORBIDDEN: "AccessDeniedException",
  // Nothing ran; the SDK retries ThrottlingException by its name.
  THROTTLED: "ThrottlingException",
  AUTHENTICATION_UNAVAILABLE: "ServiceUnavailableError",
  // Nothing ran: safe for the SDK to retry.
  POOL_TIMEOUT: "ServiceUnavailableError",
  GATEWAY_DRAINING: "ServiceUnavailableError",
  TOO_MANY_TRANSACTIONS: "ServiceUnavailableError",
  DATABASE_UNAVAILABLE: "DatabaseUnavailableException",
  PRIMARY_UNAVAILABLE: "DatabaseUnavailableException",
  // Nothing ran: the service's own name for a paused Aurora Serverless v2 instance that is resuming.
  DATABASE_RESUMING: "DatabaseResumingException",
  // Nothing ran: the idempotency record cannot be used until an operator grants what it needs.
  IDEMPOTENCY_UNAVAILABLE: "DatabaseUnavailableException",
  // May have run (or a bug, after which nobody knows): a 4xx, so the SDK does not run it again.
  INTERNAL_ERROR: "InternalServerErrorException",
};

/** How the service words a failure of these codes; the rest keep the gateway's message (and the database's, when it has one). */
const WORDED: Partial<Record<ErrorCode, (error: GatewayError) => string>> = {
  DATABASE_ERROR: (error) => (error.database ? databaseMessage(error.database) : error.message),
  TRANSACTION_NOT_FOUND: (error) => `Transaction is not found: ${error.message}`,
  TRANSACTION_EXPIRED: (error) => `Transaction is not found: ${error.message}`,
  STATEMENT_TIMEOUT: (error) => `Request timed out: ${error.message}`,
  RESULT_TOO_LARGE: (error) => `The result exceeds the size limit: ${error.message}`,
  INTERNAL_ERROR: () => "internal error; see the gateway log for this request id",
};

export function toDataApiError(err: unknown): DataApiError {
  if (err instanceof DataApiRefusal) return { name: err.exception, status: DATA_API_EXCEPTIONS[err.exception], message: err.message };
  const error = err instanceof GatewayError ? err : new GatewayError("INTERNAL_ERROR", "internal error", { cause: err });
  let name = BY_CODE[error.code] ?? "DatabaseErrorException";
  // The SDK runs a 5xx again: only a failure the failure model knows applied nothing may be one.
  if (DATA_API_EXCEPTIONS[name] >= 500 && meaningOf(error).applied !== "no") name = "DatabaseErrorException";
  const worded = WORDED[error.code];
  const message = worded !== undefined ? worded(error) : error.database ? `${error.message} (${databaseMessage(error.database)})` : error.message;
  return { name, status: DATA_API_EXCEPTIONS[name], message };
}
