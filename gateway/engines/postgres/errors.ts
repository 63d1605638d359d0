/**
 * PostgreSQL failures -> the gateway's error registry. The database's own fields (SQLSTATE, message,
 * detail, constraint...) travel with the error; parameter values never do.
 */
import pg from "pg";
import type { DatabaseErrorInfo } from "../../../schemas/errors.js";
import { GatewayError } from "../../errors.js";
import { dsqlAdvice } from "./dsql-errors.js";

/**
 * Conflicts that roll the whole transaction back and succeed when the work is simply run again.
 * Aurora DSQL reports its optimistic-concurrency conflicts as 40001 with the OCC code in the message
 * ("... (OC000)", "... (OC001)": working-with-concurrency-control.html); OC000 and OC001 as
 * SQLSTATEs of their own are how it reported them before, and stay retried.
 */
const RETRYABLE_CONFLICTS = new Set(["40001", "40P01", "OC000", "OC001"]);

export function isDatabaseError(err: unknown): err is pg.DatabaseError {
  return err instanceof pg.DatabaseError;
}

/** A write refused by an instance in recovery (a demoted primary) or in a READ ONLY transaction. */
const READ_ONLY_TRANSACTION = "25006";

/** FATAL and PANIC end the session: whatever was running may or may not have committed. */
export function isSessionFatal(err: pg.DatabaseError): boolean {
  return err.severity === "FATAL" || err.severity === "PANIC";
}

export function databaseInfo(err: pg.DatabaseError): DatabaseErrorInfo {
  const info: DatabaseErrorInfo = { sqlstate: err.code ?? "XX000", message: err.message };
  if (err.detail) info.detail = err.detail;
  if (err.hint) info.hint = err.hint;
  if (err.constraint) info.constraint = err.constraint;
  if (err.table) info.table = err.table;
  if (err.column) info.column = err.column;
  if (err.schema) info.schema = err.schema;
  if (err.position) info.position = Number(err.position);
  return info;
}

/** insufficient_privilege: the login's grants refused the statement. */
const INSUFFICIENT_PRIVILEGE = "42501";

/** A statement-level error (the session survives). */
export function mapStatementError(err: pg.DatabaseError): GatewayError {
  const database = databaseInfo(err);
  if (RETRYABLE_CONFLICTS.has(database.sqlstate)) {
    return new GatewayError("SERIALIZATION_FAILURE", `transaction conflict (${database.sqlstate}): ${err.message}`, {
      cause: err,
      database,
    });
  }
  // An Aurora DSQL limit: the database's words first, then which limit and what to do.
  const advice = dsqlAdvice(database.sqlstate, err.message);
  return new GatewayError("DATABASE_ERROR", advice === undefined ? err.message : `${err.message}: ${advice}`, {
    cause: err,
    database,
    refusedAsReadOnly: database.sqlstate === READ_ONLY_TRANSACTION,
    refusedAsWrite: database.sqlstate === READ_ONLY_TRANSACTION || database.sqlstate === INSUFFICIENT_PRIVILEGE,
  });
}

/** SQLSTATEs of a refused login: invalid_password and invalid_authorization_specification. */
const LOGIN_REFUSED = new Set(["28P01", "28000"]);

/**
 * The server refused the login: invalid_password (28P01, also RDS IAM's "PAM authentication failed")
 * and invalid_authorization_specification (28000: no matching pg_hba line, role cannot log in). Only
 * these are worth new credentials; anything else would fail the same way again.
 */
export function isAuthenticationFailure(err: unknown): boolean {
  return isDatabaseError(err) && LOGIN_REFUSED.has(err.code ?? "");
}

/** Why a connection attempt failed, in words safe for logs and error bodies (no credentials). */
export function describeConnectError(err: unknown): string {
  if (isDatabaseError(err)) {
    const advice = dsqlAdvice(err.code, err.message);
    return `${err.message} (SQLSTATE ${err.code ?? "unknown"})${advice === undefined ? "" : `: ${advice}`}`;
  }
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}
