/**
 * Isolation levels in the SQL-standard words both engines take (PostgreSQL in BEGIN ISOLATION LEVEL,
 * MySQL in SET TRANSACTION ISOLATION LEVEL).
 */
import type { Isolation } from "../../schemas/query.js";

export const ISOLATION_SQL: Readonly<Record<Isolation, string>> = Object.freeze({
  "read committed": "READ COMMITTED",
  "repeatable read": "REPEATABLE READ",
  serializable: "SERIALIZABLE",
});
