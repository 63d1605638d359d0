/**
 * Failures as `@planetscale/database` reads them: an answer `{session, error: {message, code}}` with
 * HTTP 200 for a statement that failed (the driver keeps the session, so an open transaction goes
 * on, and throws a DatabaseError with status 400), or another status with `{error}` for failures of
 * the request itself (401: the credentials; 429 and 5xx: the gateway's side), which the driver throws
 * as a DatabaseError with that status. `code` is Vitess's error code (vtrpc.Code's name), chosen for
 * MySQL errors as Vitess chooses it (go/vt/vterrors, go/mysql/sqlerror); a database error's message
 * ends in `(errno N) (sqlstate S)` as Vitess writes it, which Prisma's PlanetScale adapter parses
 * into MySQL's error code. `poolgateCode` names the registry code ([Errors](../../docs/error-codes.md)).
 */
import type { PlanetscaleError } from "../../schemas/planetscale.js";
import type { ErrorCode } from "../../schemas/errors.js";
import type { GatewayError } from "../errors.js";

/** MySQL error numbers whose Vitess code is not UNKNOWN. */
const BY_ERRNO: Record<number, string> = {
  1062: "ALREADY_EXISTS", // ER_DUP_ENTRY
  1586: "ALREADY_EXISTS", // ER_DUP_ENTRY_WITH_KEY_NAME
  1050: "ALREADY_EXISTS", // ER_TABLE_EXISTS_ERROR
  1146: "NOT_FOUND", // ER_NO_SUCH_TABLE
  1049: "NOT_FOUND", // ER_BAD_DB_ERROR
  1064: "INVALID_ARGUMENT", // ER_PARSE_ERROR
  1054: "INVALID_ARGUMENT", // ER_BAD_FIELD_ERROR
  1048: "INVALID_ARGUMENT", // ER_BAD_NULL_ERROR
  1264: "INVALID_ARGUMENT", // ER_WARN_DATA_OUT_OF_RANGE
  1406: "INVALID_ARGUMENT", // ER_DATA_TOO_LONG
  1366: "INVALID_ARGUMENT", // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
  1451: "FAILED_PRECONDITION", // ER_ROW_IS_REFERENCED_2
  1452: "FAILED_PRECONDITION", // ER_NO_REFERENCED_ROW_2
  1290: "FAILED_PRECONDITION", // ER_OPTION_PREVENTS_STATEMENT (--read-only)
  1792: "FAILED_PRECONDITION", // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
  1213: "ABORTED", // ER_LOCK_DEADLOCK
  1205: "DEADLINE_EXCEEDED", // ER_LOCK_WAIT_TIMEOUT
  1044: "PERMISSION_DENIED", // ER_DBACCESS_DENIED_ERROR
  1142: "PERMISSION_DENIED", // ER_TABLEACCESS_DENIED_ERROR
  1143: "PERMISSION_DENIED", // ER_COLUMNACCESS_DENIED_ERROR
};

const BY_CODE: Partial<Record<ErrorCode, string>> = {
  UNAUTHENTICATED: "UNAUTHENTICATED",
  FORBIDDEN: "PERMISSION_DENIED",
  INVALID_REQUEST: "INVALID_ARGUMENT",
  THROTTLED: "RESOURCE_EXHAUSTED",
  STATEMENT_TIMEOUT: "DEADLINE_EXCEEDED",
  TRANSACTION_NOT_FOUND: "NOT_FOUND",
  TRANSACTION_EXPIRED: "ABORTED",
  TRANSACTION_ABORTED: "ABORTED",
  TRANSACTION_BUSY: "ABORTED",
  TOO_MANY_TRANSACTIONS: "RESOURCE_EXHAUSTED",
  SERIALIZATION_FAILURE: "ABORTED",
  RESULT_TOO_LARGE: "RESOURCE_EXHAUSTED",
};

export interface PlanetscaleErrorAnswer {
  /** 200 (a statement's failure, with the session) or the failure's own status. */
  status: number;
  error: PlanetscaleError;
}

function vitessCode(error: GatewayError): string {
  const errno = error.database?.engineCode;
  if (typeof errno === "number" && BY_ERRNO[errno] !== undefined) return BY_ERRNO[errno];
  const code = BY_CODE[error.code];
  if (code !== undefined) return code;
  if (error.database !== undefined) return "UNKNOWN";
  return error.status >= 500 ? "UNAVAILABLE" : "FAILED_PRECONDITION";
}

export function planetscaleErrorAnswer(error: GatewayError): PlanetscaleErrorAnswer {
  const database = error.database;
  const message =
    database !== undefined && typeof database.engineCode === "number"
      ? `${database.message} (errno ${database.engineCode}) (sqlstate ${database.sqlstate})`
      : error.message;
  const status = error.status === 401 ? 401 : error.status >= 500 || error.status === 429 ? error.status : 200;
  return { status, error: { message, code: vitessCode(error), poolgateCode: error.code } };
}
