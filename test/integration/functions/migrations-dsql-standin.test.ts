/**
 * The Aurora DSQL migration engine against the local PostgreSQL standing in for DSQL (as the gateway's
 * DSQL tests do): the DSQL set applied once (DDL alone, recorded in the next transaction), files of
 * DML only applied in one transaction with their record, a file mixing DDL with other statements
 * refused before anything of it runs, the gateway's roles created WITH LOGIN and granted exactly their
 * rights. DSQL's IAM mapping is stood in for by a `sys.iam_pg_role_mappings` table in the test
 * database; PostgreSQL cannot parse `AWS IAM GRANT`, so its refusal of that statement shows the engine
 * sends it when a mapping is missing. Not covered, for want of a cluster: DSQL's acceptance of these
 * statements, of the admin token, and of the mapping itself.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dsqlMigrationEngine } from "../../../functions/migrate/dsql.js";
import { loadMigrations } from "../../../functions/migrate/migration-files.js";
import type { MigrationReport, MigrationRun } from "../../../functions/migrate/migrator.js";
import { LocalMigrations } from "../../support/local-migrations.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

const MIGRATIONS = new URL("../../../functions/migrate/migrations/dsql/", import.meta.url).pathname;
const GATEWAY_ROLE = "arn:aws:iam::123456789012:role/poolgate-gateway";
const suffix = randomBytes(4).toString("hex");
const rw = { access: "read-write" as const, username: `dsql_rw_${suffix}`, password: "" };
const ro = { access: "read-only" as const, username: `dsql_ro_${suffix}`, password: "" };

let db: TestDatabase;
const local = new LocalMigrations({ engine: dsqlMigrationEngine(GATEWAY_ROLE), migrations: MIGRATIONS, logins: [rw, ro], database: () => db.name, grantScript: undefined });
const run = (overrides: Partial<MigrationRun> = {}): Promise<MigrationReport> => local.run(overrides);
const as = (user: string, sql: string): Promise<string> => local.as(user, sql);
const migrationsWith = (files: Record<string, string>): string => local.copy(files);

beforeAll(async () => {
  db = await createTestDatabase();
  // DSQL's catalogue of IAM mappings, with the gateway's role already mapped to both roles.
  await db.admin.query("create schema sys");
  await db.admin.query("create table sys.iam_pg_role_mappings (pg_role_name text not null, arn text not null)");
  await db.admin.query("insert into sys.iam_pg_role_mappings values ($1, $3), ($2, $3)", [rw.username, ro.username, GATEWAY_ROLE]);
});

afterAll(async () => {
  await db?.drop();
  await local.cleanUp();
});

describe("migrations with the Aurora DSQL engine (local stand-in)", () => {
  it("apply the DSQL set once, create the roles with LOGIN, and change nothing on the next run", async () => {
    expect(await run()).toEqual({ applied: ["0001"], alreadyApplied: 0, logins: { [rw.username]: "created", [ro.username]: "created" } });
    expect(await run()).toEqual({ applied: [], alreadyApplied: 1, logins: { [rw.username]: "unchanged", [ro.username]: "unchanged" } });
    const { rows } = await db.admin.query("select version::text as version, name from poolgate_migrations.applied");
    expect(rows).toEqual([{ version: "1", name: "canary_table" }]);
    const { rows: roles } = await db.admin.query<{ rolname: string; rolcanlogin: boolean }>("select rolname, rolcanlogin from pg_roles where rolname = any($1) order by rolname", [[rw.username, ro.username]]);
    expect(roles.map((role) => role.rolcanlogin)).toEqual([true, true]);
  });

  it("give the read-write role DML and no DDL, the read-only role SELECT, and neither the history", async () => {
    expect(await as(rw.username, "insert into poolgate_canary values (1, 'm', now())")).toBe("ok");
    expect(await as(rw.username, "update poolgate_canary set marker = 'n'")).toBe("ok");
    expect(await as(rw.username, "create table sneaky (id int)")).toBe("42501");
    expect(await as(ro.username, "select * from poolgate_canary")).toBe("ok");
    expect(await as(ro.username, "delete from poolgate_canary")).toBe("42501");
    for (const role of [rw.username, ro.username]) expect(await as(role, "select * from poolgate_migrations.applied")).toBe("42501");
  });

  it("run a DDL file alone and a DML-only file in one transaction with its record, and grant the new table", async () => {
    const dir = migrationsWith({
      "0002_orders.sql": "create table if not exists orders (id int primary key, note text not null);\n",
      "0003_seed.sql": "insert into orders values (1, 'first');\ninsert into orders values (2, 'second');\n",
    });
    expect((await run({ migrations: loadMigrations(dir) })).applied).toEqual(["0002", "0003"]);
    expect((await db.admin.query("select count(*)::int as n from orders")).rows).toEqual([{ n: 2 }]);
    expect(await as(rw.username, "insert into orders values (3, 'third')")).toBe("ok");
    expect(await as(ro.username, "select * from orders")).toBe("ok");
  });

  it("refuse a file that mixes DDL with other statements before any of it runs, and roll back a failing DML file whole", async () => {
    const mixed = migrationsWith({
      "0002_orders.sql": "create table if not exists orders (id int primary key, note text not null);\n",
      "0003_seed.sql": "insert into orders values (1, 'first');\ninsert into orders values (2, 'second');\n",
      "0004_mixed.sql": "create table mixed_a (id int primary key);\ninsert into orders values (4, 'x');\n",
    });
    await expect(run({ migrations: loadMigrations(mixed) })).rejects.toThrow(/0004_mixed\.sql cannot run on Aurora DSQL: it has 2 statements, 1 of them DDL/);
    expect((await db.admin.query("select to_regclass('mixed_a') as t")).rows).toEqual([{ t: null }]);
    const failing = migrationsWith({
      "0002_orders.sql": "create table if not exists orders (id int primary key, note text not null);\n",
      "0003_seed.sql": "insert into orders values (1, 'first');\ninsert into orders values (2, 'second');\n",
      "0004_more.sql": "insert into orders values (10, 'ten');\ninsert into orders values (1, 'duplicate key');\n",
    });
    await expect(run({ migrations: loadMigrations(failing) })).rejects.toThrow(/0004_more\.sql failed and was rolled back/);
    expect((await db.admin.query("select count(*)::int as n from orders where id = 10")).rows).toEqual([{ n: 0 }]);
    expect((await db.admin.query("select count(*)::int as n from poolgate_migrations.applied where version = 4")).rows).toEqual([{ n: 0 }]);
  });

  it("send AWS IAM GRANT when a role is not mapped to the gateway's IAM role", async () => {
    await db.admin.query("delete from sys.iam_pg_role_mappings where pg_role_name = $1", [ro.username]);
    // PostgreSQL cannot parse the DSQL statement: its syntax error is the proof that it was sent.
    await expect(run()).rejects.toMatchObject({ code: "42601" });
    await expect(run()).rejects.toThrow(/syntax error at or near "aws"/);
  });
});
