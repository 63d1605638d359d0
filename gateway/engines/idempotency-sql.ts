/**
 * The SQL of the idempotency record (gateway/idempotency/), in each engine's dialect: the table and
 * its creation, claiming a key, recording the answer, reading a key back, forgetting an expired one
 * and deleting expired ones in bounded steps. Times are epoch milliseconds from the gateway's clock
 * (BIGINT), so the engines need no common time type and tests can drive expiry with a manual clock.
 * The core runs these through the ordinary session; each engine answers in `<engine>/idempotency-sql.ts`.
 */
import type { GatewayError } from "../errors.js";
import { isDatabaseRefusal } from "../failure-meaning.js";

export interface IdempotencySql {
  /** The table where keys are kept when the configuration names none. */
  readonly defaultTable: string;
  /** Statements that create the table if it is missing, each run on its own, outside any transaction. */
  create(table: string): readonly string[];
  /** INSERT of a claim: params principal, key, fingerprint, createdAtMs, expiresAtMs, answer (null until recorded). */
  claim(table: string): string;
  /** UPDATE of the claim's answer: params answer, principal, key. */
  record(table: string): string;
  /** SELECT fingerprint, answer, expires_at_ms: params principal, key. */
  find(table: string): string;
  /** DELETE of one expired key: params principal, key, nowMs. */
  forget(table: string): string;
  /** DELETE of at most `limit` keys expired before nowMs: params nowMs. */
  sweep(table: string, limit: number): string;
  /** Whether a failure is the table's key already taken (the claim of a key that exists). */
  isKeyTaken(err: unknown): boolean;
  /**
   * A statement answering one row whose first column is true when the session's login may read and
   * write the table, null when the table is absent; or failing with an error isMissing or isDenied
   * accepts when the table is absent or out of the login's reach.
   */
  usable(table: string): string;
  /** Whether a failure is the table (or its schema) missing. */
  isMissing(err: unknown): boolean;
  /** Whether a failure is the login lacking a privilege. */
  isDenied(err: unknown): boolean;
  /** The grants the login needs on the table, as statements to run. */
  grants(table: string, login: string): string;
  /** The grant script (schemas/grants/) that creates the table and grants them. */
  readonly grantScript: string;
}

/** A DATABASE_ERROR with this SQLSTATE (and engine code, where the engine has them). */
export function databaseErrorIs(err: unknown, sqlstate: string, engineCode?: number): boolean {
  const database = isDatabaseRefusal(err) ? (err as GatewayError).database : undefined;
  if (database === undefined) return false;
  return database.sqlstate === sqlstate && (engineCode === undefined || database.engineCode === engineCode);
}
