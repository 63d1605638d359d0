/**
 * The idempotency record's SQL on PostgreSQL (and Aurora DSQL): a schema of its own, text answers.
 * Aurora DSQL builds secondary indexes only with CREATE INDEX ASYNC (which PostgreSQL, and so the
 * local stand-in, does not know): there the expiry index is left out, and cleanup's bounded DELETE
 * scans the table.
 */
import { databaseErrorIs, type IdempotencySql } from "../idempotency-sql.js";

const quoted = (table: string) =>
  table
    .split(".")
    .map((part) => `"${part}"`)
    .join(".");

export function postgresIdempotencySql(flavour: "aurora-dsql" | undefined): IdempotencySql {
  return { ...sql, create: (table) => (flavour === "aurora-dsql" ? sql.create(table).filter((statement) => !statement.startsWith("CREATE INDEX")) : sql.create(table)) };
}

const sql: IdempotencySql = {
  defaultTable: "poolgate.idempotency_keys",
  create(table) {
    const parts = table.split(".");
    const schema = parts.length === 2 ? [`CREATE SCHEMA IF NOT EXISTS "${parts[0] as string}"`] : [];
    return [
      ...schema,
      `CREATE TABLE IF NOT EXISTS ${quoted(table)} (
        principal text NOT NULL,
        idempotency_key text NOT NULL,
        fingerprint text NOT NULL,
        answer text,
        created_at_ms bigint NOT NULL,
        expires_at_ms bigint NOT NULL,
        PRIMARY KEY (principal, idempotency_key))`,
      `CREATE INDEX IF NOT EXISTS "${(parts.at(-1) as string).slice(0, 50)}_expiry" ON ${quoted(table)} (expires_at_ms)`,
    ];
  },
  claim: (table) =>
    `INSERT INTO ${quoted(table)} (principal, idempotency_key, fingerprint, created_at_ms, expires_at_ms, answer) VALUES ($1, $2, $3, $4, $5, $6)`,
  record: (table) => `UPDATE ${quoted(table)} SET answer = $1 WHERE principal = $2 AND idempotency_key = $3`,
  find: (table) => `SELECT fingerprint, answer, expires_at_ms FROM ${quoted(table)} WHERE principal = $1 AND idempotency_key = $2`,
  forget: (table) => `DELETE FROM ${quoted(table)} WHERE principal = $1 AND idempotency_key = $2 AND expires_at_ms <= $3`,
  sweep: (table, limit) =>
    `DELETE FROM ${quoted(table)} WHERE (principal, idempotency_key) IN (SELECT principal, idempotency_key FROM ${quoted(table)} WHERE expires_at_ms <= $1 LIMIT ${Math.trunc(limit)})`,
  isKeyTaken: (err) => databaseErrorIs(err, "23505"),
  // NULL when missing (asked without an error, which would cost the embedded database's one session
  // its state); resolving the name needs USAGE on its schema (42501 without it); then each right.
  usable(table) {
    const name = `'${quoted(table).replaceAll("'", "''")}'`;
    const rights = ["SELECT", "INSERT", "UPDATE", "DELETE"].map((right) => `has_table_privilege(${name}, '${right}')`).join(" AND ");
    return `SELECT CASE WHEN to_regclass(${name}) IS NULL THEN NULL ELSE ${rights} END`;
  },
  // 42P01 undefined_table, 3F000 invalid_schema_name.
  isMissing: (err) => databaseErrorIs(err, "42P01") || databaseErrorIs(err, "3F000"),
  isDenied: (err) => databaseErrorIs(err, "42501"),
  grants(table, login) {
    const parts = table.split(".");
    const schema = parts.length === 2 ? `GRANT USAGE ON SCHEMA "${parts[0] as string}" TO ${login}; ` : "";
    return `${schema}GRANT SELECT, INSERT, UPDATE, DELETE ON ${quoted(table)} TO ${login}`;
  },
  grantScript: "schemas/grants/postgres.sql",
};
