/**
 * The gateway's database logins made by the very grant scripts docs/security-and-logins.md shows
 * (schemas/grants/<engine>.sql), run for one test database: the script's names (database app, logins
 * poolgate_rw and poolgate_ro, their passwords '...') become the test's. Roles and users belong to the
 * server, so each test's are named after its database and dropped with it.
 */
import { readFileSync } from "node:fs";
import type { TestMysqlDatabase } from "./mysql.js";
import type { TestDatabase } from "./postgres.js";

export interface Login {
  username: string;
  password: string;
}

export interface DatabaseLogins {
  readWrite: Login;
  readOnly: Login;
  /** Where the script made the idempotency record, as idempotency.table names it. */
  idempotencyTable: string;
  /** Drops the test database, then the logins. */
  drop(): Promise<void>;
}

const PASSWORD = "grant-script-password-1";

/** The grant script of an engine, as docs/security-and-logins.md shows it. */
export function grantScript(engine: "postgres" | "mysql"): string {
  return readFileSync(new URL(`../../schemas/grants/${engine}.sql`, import.meta.url), "utf8");
}

/** The script's statements, comments left out (none of its strings holds `--` or `;`). */
export function statementsOf(script: string): string[] {
  return script
    .split("\n")
    .map((line) => line.replace(/(^|\s)--.*$/, ""))
    .join("\n")
    .split(/;\s*(?:\n|$)/)
    .map((statement) => statement.trim())
    .filter((statement) => statement.length > 0);
}

/** Runs schemas/grants/postgres.sql on the test database, with the test's names. */
export async function createPostgresLogins(db: TestDatabase, script = grantScript("postgres")): Promise<DatabaseLogins> {
  const readWrite = { username: `${db.name}_rw`, password: PASSWORD };
  const readOnly = { username: `${db.name}_ro`, password: PASSWORD };
  const named = script
    .replaceAll(/\bpoolgate_rw\b/g, readWrite.username)
    .replaceAll(/\bpoolgate_ro\b/g, readOnly.username)
    .replaceAll(/\bDATABASE app\b/g, `DATABASE ${db.name}`)
    .replaceAll("'...'", `'${PASSWORD}'`);
  for (const statement of statementsOf(named)) await db.admin.query(statement);
  return {
    readWrite,
    readOnly,
    idempotencyTable: "poolgate.idempotency_keys",
    drop: async () => {
      await db.drop();
      const { default: pg } = await import("pg");
      const { ADMIN_URL } = await import("./postgres.js");
      const admin = new pg.Client({ connectionString: ADMIN_URL });
      await admin.connect();
      try {
        for (const login of [readWrite, readOnly]) await admin.query(`DROP ROLE IF EXISTS ${login.username}`);
      } finally {
        await admin.end();
      }
    },
  };
}

/**
 * Runs schemas/grants/mysql.sql on the test database, with the test's names, once per host: '%' as
 * the script says, and 'localhost', which a MariaDB anonymous user would otherwise match first. The
 * script's poolgate_internal database (a server's, like its users) is the test database's own, named
 * after it and dropped with it.
 */
export async function createMysqlLogins(db: TestMysqlDatabase, script = grantScript("mysql")): Promise<DatabaseLogins> {
  const readWrite = { username: `${db.name.slice(-10)}_rw`, password: PASSWORD };
  const readOnly = { username: `${db.name.slice(-10)}_ro`, password: PASSWORD };
  const hosts = ["%", "localhost"];
  const internal = `${db.name}_internal`;
  for (const host of hosts) {
    const named = script
      .replaceAll(/\bpoolgate_internal\b/g, internal)
      .replaceAll("'poolgate_rw'@'%'", `'${readWrite.username}'@'${host}'`)
      .replaceAll("'poolgate_ro'@'%'", `'${readOnly.username}'@'${host}'`)
      .replaceAll(/\bON app\.\*/g, `ON \`${db.name}\`.*`)
      .replaceAll(/\bUSE app\b/g, `USE \`${db.name}\``)
      .replaceAll("'...'", `'${PASSWORD}'`);
    for (const statement of statementsOf(named)) await db.admin.query(statement);
  }
  return {
    readWrite,
    readOnly,
    idempotencyTable: `${internal}.idempotency_keys`,
    drop: async () => {
      for (const login of [readWrite, readOnly]) for (const host of hosts) await db.admin.query(`DROP USER IF EXISTS '${login.username}'@'${host}'`);
      await db.admin.query(`DROP DATABASE IF EXISTS \`${internal}\``);
      await db.drop();
    },
  };
}
