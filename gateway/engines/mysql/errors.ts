/**
 * MySQL/MariaDB failures -> the gateway's error registry. The server's error number travels as
 * `engineCode`, its SQLSTATE as `sqlstate`, its message unchanged; parameter values never do.
 */
import type { DatabaseErrorInfo } from "../../../schemas/errors.js";
import { GatewayError } from "../../errors.js";

/** What mysql2 attaches to errors that came from the server (or from the connection). */
export interface MysqlDriverError extends Error {
  code?: string;
  errno?: number;
  sqlState?: string;
  sqlMessage?: string;
  fatal?: boolean;
}

/** Deadlock (1213) and lock-wait timeout (1205): nothing of the statement stayed; run it again. */
const RETRYABLE_CONFLICTS = new Set([1213, 1205]);

/** Interrupted by KILL QUERY (1317), or by the server's own statement time limit (MySQL 3024, MariaDB 1969). */
export const INTERRUPTED = new Set([1317, 3024, 1969]);

/**
 * Writes refused because the instance is read-only: --read-only/--super-read-only (1290, only when the
 * message says so: 1290 also covers --secure-file-priv and others) and InnoDB read-only mode (1836,
 * Aurora readers). A write in the caller's own READ ONLY transaction (1792) is not among them. The
 * executor still confirms the instance's role before treating one as a failover sign.
 */
function isReadOnlyRefusal(errno: number, message: string): boolean {
  if (errno === 1836) return true;
  return errno === 1290 && /read[-_ ]only/i.test(message);
}

export function isServerError(err: unknown): err is MysqlDriverError & { errno: number; sqlState: string } {
  if (!(err instanceof Error)) return false;
  const candidate = err as MysqlDriverError;
  return typeof candidate.errno === "number" && typeof candidate.sqlState === "string" && candidate.fatal !== true;
}

/** Names the constraint of a duplicate key or foreign key error, as PostgreSQL's errors do. */
function constraintOf(errno: number, message: string): string | undefined {
  if (errno === 1062 || errno === 1586) return /for key '([^']+)'/.exec(message)?.[1];
  if (errno === 1451 || errno === 1452) return /CONSTRAINT `([^`]+)`/.exec(message)?.[1];
  if (errno === 3819 || errno === 4025) return /[Cc]onstraint '([^']+)'/.exec(message)?.[1] ?? /CONSTRAINT `([^`]+)`/.exec(message)?.[1];
  return undefined;
}

export function databaseInfo(err: MysqlDriverError & { errno: number; sqlState: string }): DatabaseErrorInfo {
  const message = err.sqlMessage ?? err.message;
  const info: DatabaseErrorInfo = { sqlstate: err.sqlState, message, engineCode: err.errno };
  const constraint = constraintOf(err.errno, message);
  if (constraint !== undefined) info.constraint = constraint;
  return info;
}

/** ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION: the transaction's own READ ONLY refused a write. */
const READ_ONLY_TRANSACTION = 1792;

/**
 * The login's grants refused the statement: database (1044), table (1142), column (1143), routine
 * (1370) access denied, or a privilege the statement needs (1227).
 */
const PRIVILEGE_REFUSALS = new Set([1044, 1142, 1143, 1227, 1370]);

/** A statement-level error (the session survives). */
export function mapStatementError(err: MysqlDriverError & { errno: number; sqlState: string }): GatewayError {
  const database = databaseInfo(err);
  if (RETRYABLE_CONFLICTS.has(err.errno)) {
    return new GatewayError("SERIALIZATION_FAILURE", `transaction conflict (${err.errno}): ${database.message}`, { cause: err, database });
  }
  return new GatewayError("DATABASE_ERROR", database.message, {
    cause: err,
    database,
    refusedAsReadOnly: isReadOnlyRefusal(err.errno, database.message),
    refusedAsWrite: err.errno === READ_ONLY_TRANSACTION || isReadOnlyRefusal(err.errno, database.message) || PRIVILEGE_REFUSALS.has(err.errno),
  });
}

/**
 * The server refused the login: ER_ACCESS_DENIED_ERROR (1045), which is also what Aurora answers to a
 * refused or expired IAM token. 1698 (ER_ACCESS_DENIED_NO_PASSWORD_ERROR) is left out on purpose: it
 * means the account authenticates by something other than a password (unix_socket, auth_socket), so
 * a re-read password cannot help and would only cost a Secrets Manager call per connect.
 */
export function isAuthenticationFailure(err: unknown): boolean {
  return err instanceof Error && (err as MysqlDriverError).errno === 1045;
}

/** Why a connection attempt failed, in words safe for logs and error bodies (no credentials). */
export function describeConnectError(err: unknown): string {
  if (err instanceof Error) {
    const candidate = err as MysqlDriverError;
    if (typeof candidate.errno === "number" && candidate.sqlState) return `${candidate.sqlMessage ?? err.message} (MySQL error ${candidate.errno})`;
    return candidate.code ? `${err.message} (${candidate.code})` : err.message;
  }
  return String(err);
}
