/**
 * The idempotency record's SQL on MySQL and MariaDB: an InnoDB table, keys compared byte for byte, by
 * default in a database of its own (poolgate_internal, a MySQL schema being a database): the logins'
 * grants on the application's database (app.*) do not reach it, so only the login granted the table
 * (the gateway's read-write one) reads other principals' keys and stored answers.
 */
import { databaseErrorIs, type IdempotencySql } from "../idempotency-sql.js";

const quoted = (table: string) =>
  table
    .split(".")
    .map((part) => `\`${part}\``)
    .join(".");

export const mysqlIdempotencySql: IdempotencySql = {
  defaultTable: "poolgate_internal.idempotency_keys",
  create: (table) => [
    ...(table.includes(".") ? [`CREATE DATABASE IF NOT EXISTS ${quoted(table.split(".")[0] as string)}`] : []),
    `CREATE TABLE IF NOT EXISTS ${quoted(table)} (
      principal VARCHAR(255) NOT NULL,
      idempotency_key VARCHAR(255) NOT NULL,
      fingerprint CHAR(64) NOT NULL,
      answer LONGTEXT NULL,
      created_at_ms BIGINT NOT NULL,
      expires_at_ms BIGINT NOT NULL,
      PRIMARY KEY (principal, idempotency_key),
      KEY expiry (expires_at_ms)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
  ],
  claim: (table) =>
    `INSERT INTO ${quoted(table)} (principal, idempotency_key, fingerprint, created_at_ms, expires_at_ms, answer) VALUES (?, ?, ?, ?, ?, ?)`,
  record: (table) => `UPDATE ${quoted(table)} SET answer = ? WHERE principal = ? AND idempotency_key = ?`,
  find: (table) => `SELECT fingerprint, answer, expires_at_ms FROM ${quoted(table)} WHERE principal = ? AND idempotency_key = ?`,
  forget: (table) => `DELETE FROM ${quoted(table)} WHERE principal = ? AND idempotency_key = ? AND expires_at_ms <= ?`,
  sweep: (table, limit) => `DELETE FROM ${quoted(table)} WHERE expires_at_ms <= ? LIMIT ${Math.trunc(limit)}`,
  // ER_DUP_ENTRY
  isKeyTaken: (err) => databaseErrorIs(err, "23000", 1062),
  // Reading it proves SELECT; MySQL has no cheap question for the other rights, which the first claim meets.
  usable: (table) => `SELECT (SELECT COUNT(*) FROM ${quoted(table)} WHERE 1 = 0) = 0`,
  // ER_NO_SUCH_TABLE, ER_BAD_DB_ERROR.
  isMissing: (err) => databaseErrorIs(err, "42S02", 1146) || databaseErrorIs(err, "42000", 1049),
  // ER_TABLEACCESS_DENIED_ERROR, ER_DBACCESS_DENIED_ERROR.
  isDenied: (err) => databaseErrorIs(err, "42000", 1142) || databaseErrorIs(err, "42000", 1044),
  // current_user answers user@host; GRANT names it 'user'@'host'.
  grants: (table, login) => `GRANT SELECT, INSERT, UPDATE, DELETE ON ${quoted(table)} TO ${login.replace(/^(.*)@([^@]*)$/, "'$1'@'$2'")}`,
  grantScript: "schemas/grants/mysql.sql",
};
