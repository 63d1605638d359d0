/**
 * The schema migrations on the real local MariaDB: the MySQL files applied once, the logins created as
 * users with exactly their rights (per database, so later tables too), the history in a database of its
 * own out of their reach, and a drifted password set again from the secret (MariaDB checks passwords).
 */
import { randomBytes } from "node:crypto";
import mysql from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadMigrations } from "../../../functions/migrate/migration-files.js";
import { runMigrations, type MigrationRun } from "../../../functions/migrate/migrator.js";
import { mysqlMigrationEngine } from "../../../functions/migrate/mysql.js";
import { grantScript } from "../../support/database-logins.js";
import { startTestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase, MYSQL_ADMIN_URL, type TestMysqlDatabase } from "../../support/mysql.js";

const MIGRATIONS = new URL("../../../functions/migrate/migrations/mysql/", import.meta.url).pathname;
const suffix = randomBytes(4).toString("hex");
const rw = { access: "read-write" as const, username: `mig_rw_${suffix}`, password: "rw-Password-1" };
const ro = { access: "read-only" as const, username: `mig_ro_${suffix}`, password: "ro-Password-1" };
const admin = new URL(MYSQL_ADMIN_URL);

let db: TestMysqlDatabase;
const settings = () => ({ host: admin.hostname, port: Number(admin.port || 3306), database: db.name, tls: "disable" as const });

const migrate = (overrides: Partial<MigrationRun> = {}) =>
  runMigrations({
    engine: mysqlMigrationEngine,
    settings: settings(),
    admin: { current: { username: decodeURIComponent(admin.username) || "root", password: decodeURIComponent(admin.password) } },
    logins: [rw, ro],
    migrations: loadMigrations(MIGRATIONS),
    grantScript: grantScript("mysql"),
    ...overrides,
  });

/** Runs `sql` logged in as the login; the error number when refused. */
async function as(login: { username: string; password: string }, sql: string): Promise<string> {
  const connection = await mysql.createConnection({ host: admin.hostname, port: Number(admin.port || 3306), user: login.username, password: login.password, database: db.name });
  try {
    await connection.query(sql);
    return "ok";
  } catch (err) {
    return String((err as { errno?: number }).errno);
  } finally {
    await connection.end();
  }
}

beforeAll(async () => {
  db = await createTestMysqlDatabase();
});

afterAll(async () => {
  for (const user of [rw.username, ro.username]) await db?.admin.query("drop user if exists ?@'%'", [user]);
  await db?.admin.query(`drop database if exists ${db.name}_migrations`);
  await db?.drop();
});

describe("migrations on MySQL (MariaDB)", () => {
  it("apply the files once, create the logins, and change nothing on the next run", async () => {
    expect(await migrate()).toEqual({ applied: ["0001"], alreadyApplied: 0, logins: { [rw.username]: "created", [ro.username]: "created" } });
    expect(await migrate()).toEqual({ applied: [], alreadyApplied: 1, logins: { [rw.username]: "unchanged", [ro.username]: "unchanged" } });
  });

  it("give the read-write login DML and no DDL, the read-only login SELECT, and neither the history", async () => {
    expect(await as(rw, "insert into poolgate_canary values (1, 'm', now())")).toBe("ok");
    expect(await as(rw, "update poolgate_canary set marker = 'n'")).toBe("ok");
    // 1142: command denied for the table.
    expect(await as(rw, "create table sneaky (id int)")).toBe("1142");
    expect(await as(rw, "drop table poolgate_canary")).toBe("1142");
    expect(await as(ro, "select * from poolgate_canary")).toBe("ok");
    expect(await as(ro, "delete from poolgate_canary")).toBe("1142");
    for (const login of [rw, ro]) expect(await as(login, `select * from ${db.name}_migrations.applied`)).toBe("1142");
  });

  it("apply the README's grant script on every run: the idempotency record in its own database, the read-write login's alone, which the gateway then uses", async () => {
    expect(await migrate()).toEqual({ applied: [], alreadyApplied: 1, logins: { [rw.username]: "unchanged", [ro.username]: "unchanged" } });
    // 1142: command denied for the table.
    expect(await as(ro, "select count(*) from poolgate_internal.idempotency_keys")).toBe("1142");
    expect(await as(rw, "select count(*) from poolgate_internal.idempotency_keys")).toBe("ok");
    // The gateway on the read-write login, with the default settings, finds the record and writes once under a key.
    const url = `mysql://${rw.username}:${rw.password}@${admin.host}/${db.name}`;
    const gateway = await startTestGateway({ clusters: { default: { writerUrl: url } } });
    try {
      const write = { sql: "insert into poolgate_canary values (2, 'keyed', now())", idempotencyKey: `migrated-${suffix}` };
      const first = await gateway.post("/v1/query", write);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect((await gateway.post("/v1/query", write)).body).toMatchObject({ replayed: true, rowCount: 1 });
    } finally {
      await gateway.stop();
    }
  });

  it("sets a drifted password again from the secret", async () => {
    await db.admin.query("alter user ?@'%' identified by 'changed-by-hand'", [rw.username]);
    expect(await mysqlMigrationEngine.canLogIn(settings(), rw)).toBe(false);
    expect((await migrate()).logins[rw.username]).toBe("password-set");
    expect(await mysqlMigrationEngine.canLogIn(settings(), rw)).toBe(true);
  });
});
