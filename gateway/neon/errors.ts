/**
 * Failures as Neon's driver reads them: HTTP 400 with `{message, code, ...}` becomes a NeonDbError
 * carrying the PostgreSQL error's fields (code is the SQLSTATE, position a 1-based offset as text,
 * detail, hint, constraint...), so a caller's `catch` reads a Poolgate answer as it reads Neon's. A
 * refusal of the request (4xx) is a 400 whose code is the registry code; a failure on the gateway's
 * side (5xx, 429) keeps its status, which the driver reports as "Server error (HTTP status N)" with
 * the body. Every body also names the registry code as `poolgateCode`.
 */
import type { GatewayError } from "../errors.js";

export interface NeonErrorAnswer {
  status: number;
  body: Record<string, string>;
}

export function neonErrorAnswer(error: GatewayError): NeonErrorAnswer {
  const body: Record<string, string> = { message: error.message, code: error.code, poolgateCode: error.code };
  const database = error.database;
  if (database !== undefined) {
    body.message = database.message;
    body.code = database.sqlstate;
    body.severity = "ERROR";
    if (database.detail !== undefined) body.detail = database.detail;
    if (database.hint !== undefined) body.hint = database.hint;
    if (database.position !== undefined) body.position = String(database.position);
    if (database.schema !== undefined) body.schema = database.schema;
    if (database.table !== undefined) body.table = database.table;
    if (database.column !== undefined) body.column = database.column;
    if (database.constraint !== undefined) body.constraint = database.constraint;
  }
  return { status: error.status < 500 && error.status !== 429 ? 400 : error.status, body };
}
