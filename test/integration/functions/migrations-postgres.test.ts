/**
 * The schema migrations on real PostgreSQL: the versioned files applied once and in order, the
 * gateway's logins created with exactly their rights (read-write: DML on the application's tables
 * present and future, no DDL; read-only: SELECT), the history out of their reach, edited or
 * out-of-order migrations refused; the custom resource's handler end to end (secrets from a Secrets
 * Manager stand-in); and, on a password-checking server over verified TLS, the SCRAM verifiers, a
 * drifted password set again from the secret, a rotation mid-way left alone, and the master's AWSPENDING.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { Context } from "aws-lambda";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadMigrations } from "../../../functions/migrate/migration-files.js";
import { MigrationRefusedError, type MigrationReport, runMigrations, type MigrationRun } from "../../../functions/migrate/migrator.js";
import { postgresMigrationEngine } from "../../../functions/migrate/postgres.js";
import { type PasswordServer, startPasswordServer } from "../../support/pg-password-server.js";
import { grantScript } from "../../support/database-logins.js";
import { startTestGateway } from "../../support/gateway.js";
import { LocalMigrations } from "../../support/local-migrations.js";
import { ADMIN_URL, createTestDatabase, type TestDatabase } from "../../support/postgres.js";
import { type SecretsManagerStandIn, startSecretsManagerStandIn } from "../../support/secrets-manager-standin.js";

const MIGRATIONS = new URL("../../../functions/migrate/migrations/postgres/", import.meta.url).pathname;
const suffix = randomBytes(4).toString("hex");
const rw = { access: "read-write" as const, username: `mig_rw_${suffix}`, password: "rw-password-1" };
const ro = { access: "read-only" as const, username: `mig_ro_${suffix}`, password: "ro-password-1" };
const admin = new URL(ADMIN_URL);

let db: TestDatabase;
const local = new LocalMigrations({ engine: postgresMigrationEngine, migrations: MIGRATIONS, logins: [rw, ro], database: () => db.name, grantScript: grantScript("postgres") });
const run = (overrides: Partial<MigrationRun> = {}): Promise<MigrationReport> => local.run(overrides);
const as = (user: string, sql: string): Promise<string> => local.as(user, sql);
const migrationsCopy = (): string => local.copy();

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
  await local.cleanUp();
});

describe("migrations on PostgreSQL", () => {
  it("apply the versioned files once, create the logins, and change nothing on the next run", async () => {
    const first = await run();
    expect(first).toEqual({ applied: ["0001"], alreadyApplied: 0, logins: { [rw.username]: "created", [ro.username]: "created" } });
    const again = await run();
    expect(again).toEqual({ applied: [], alreadyApplied: 1, logins: { [rw.username]: "unchanged", [ro.username]: "unchanged" } });
    const { rows } = await db.admin.query("select version::text as version, name from poolgate_migrations.applied");
    expect(rows).toEqual([{ version: "1", name: "example_tables" }]);
  });

  it("give the read-write login DML and no DDL, the read-only login SELECT, and neither the history", async () => {
    expect(await as(rw.username, "insert into notes (title) values ('from the rw login')")).toBe("ok");
    expect(await as(rw.username, "update notes set body = 'x'")).toBe("ok");
    expect(await as(rw.username, "insert into poolgate_canary values (1, 'm', now())")).toBe("ok");
    expect(await as(rw.username, "create table sneaky (id int)")).toBe("42501");
    expect(await as(rw.username, "drop table notes")).toBe("42501");
    expect(await as(ro.username, "select * from notes")).toBe("ok");
    expect(await as(ro.username, "insert into notes (title) values ('no')")).toBe("42501");
    expect(await as(ro.username, "select nextval('notes_id_seq')")).toBe("42501");
    for (const login of [rw.username, ro.username]) expect(await as(login, "select * from poolgate_migrations.applied")).toBe("42501");
  });

  it("apply the README's grant script on every run: functions taken from PUBLIC, and the idempotency record the read-write login's alone, which the gateway then uses", async () => {
    // The owner's SECURITY DEFINER function, made between two runs: the script's default privileges already hold for it.
    await db.admin.query("create function definer_probe() returns int language sql security definer as 'select 1'");
    expect(await run()).toEqual({ applied: [], alreadyApplied: 1, logins: { [rw.username]: "unchanged", [ro.username]: "unchanged" } });
    expect(await as(ro.username, "select definer_probe()")).toBe("42501");
    expect(await as(rw.username, "select definer_probe()")).toBe("ok");
    expect(await as(ro.username, "select count(*) from poolgate.idempotency_keys")).toBe("42501");
    expect(await as(rw.username, "select count(*) from poolgate.idempotency_keys")).toBe("ok");
    // The gateway on the read-write login, with the default settings, finds the record and writes once under a key.
    const gateway = await startTestGateway({ clusters: { default: { writerUrl: `postgres://${rw.username}@${admin.host}/${db.name}` } } });
    try {
      const write = { sql: "insert into notes (title) values ('keyed') returning id", idempotencyKey: `migrated-${suffix}` };
      const first = await gateway.post("/v1/query", write);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect((await gateway.post("/v1/query", write)).body).toMatchObject({ replayed: true, rows: first.body.rows });
    } finally {
      await gateway.stop();
    }
  });

  it("grant the logins the tables a later migration creates", async () => {
    const dir = migrationsCopy();
    writeFileSync(join(dir, "0002_orders.sql"), "create table orders (id bigserial primary key, note_id int references notes(id));\n");
    expect((await run({ migrations: loadMigrations(dir) })).applied).toEqual(["0002"]);
    expect(await as(rw.username, "insert into orders (note_id) values (null)")).toBe("ok");
    expect(await as(ro.username, "select * from orders")).toBe("ok");
    expect(await as(ro.username, "delete from orders")).toBe("42501");
  });

  it("refuse an applied migration that was edited, and a new one older than the latest applied", async () => {
    const edited = migrationsCopy();
    writeFileSync(join(edited, "0001_example_tables.sql"), "-- edited\ncreate table if not exists notes (id serial primary key);\n");
    writeFileSync(join(edited, "0002_orders.sql"), "create table orders (id bigserial primary key, note_id int references notes(id));\n");
    await expect(run({ migrations: loadMigrations(edited) })).rejects.toThrow(MigrationRefusedError);
    await expect(run({ migrations: loadMigrations(edited) })).rejects.toThrow(/0001_example_tables\.sql was changed after it was applied/);
    const late = migrationsCopy();
    writeFileSync(join(late, "0002_orders.sql"), "create table orders (id bigserial primary key, note_id int references notes(id));\n");
    writeFileSync(join(late, "late.sql"), "select 1;\n");
    expect(() => loadMigrations(late)).toThrow(/late\.sql is not named <version>_<name>\.sql/);
    rmSync(join(late, "late.sql"));
    writeFileSync(join(late, "0000_late.sql"), "select 1;\n");
    await expect(run({ migrations: loadMigrations(late) })).rejects.toThrow(/0000_late\.sql is older than 2, the latest applied/);
  });

  it("roll a failing migration back whole, recording nothing", async () => {
    const dir = migrationsCopy();
    writeFileSync(join(dir, "0002_orders.sql"), "create table orders (id bigserial primary key, note_id int references notes(id));\n");
    writeFileSync(join(dir, "0003_broken.sql"), "create table half (id int);\nselect no_such_function();\n");
    await expect(run({ migrations: loadMigrations(dir) })).rejects.toThrow(/0003_broken\.sql failed and was rolled back/);
    const { rows } = await db.admin.query("select to_regclass('public.half') as half, (select count(*)::int from poolgate_migrations.applied where version = 3) as recorded");
    expect(rows).toEqual([{ half: null, recorded: 0 }]);
  });
});

describe("the custom resource's handler", () => {
  let secrets: SecretsManagerStandIn;
  let handlerDb: TestDatabase;
  const arn = (name: string) => `arn:aws:secretsmanager:us-east-1:123456789012:secret:${name}-AbCdEf`;
  const hrw = { username: `cr_rw_${suffix}`, password: "cr-rw-password" };
  const hro = { username: `cr_ro_${suffix}`, password: "cr-ro-password" };

  beforeAll(async () => {
    handlerDb = await createTestDatabase();
    secrets = await startSecretsManagerStandIn();
    secrets.setStage(arn("admin"), "AWSCURRENT", JSON.stringify({ username: decodeURIComponent(admin.username) || "postgres", password: decodeURIComponent(admin.password) || "unused" }));
    secrets.setStage(arn("rw"), "AWSCURRENT", JSON.stringify(hrw));
    secrets.setStage(arn("ro"), "AWSCURRENT", JSON.stringify(hro));
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
      AWS_SECRET_ACCESS_KEY: "example-secret",
      POWERTOOLS_TRACE_ENABLED: "false",
      AWS_LAMBDA_FUNCTION_NAME: "poolgate-migrations",
      // The bundle's copy of schemas/grants/ is the project's own here.
      POOLGATE_GRANTS_DIR: new URL("../../../schemas/grants/", import.meta.url).pathname,
    });
  });

  afterAll(async () => {
    await handlerDb?.drop();
    await secrets?.close();
    const cleanup = new pg.Client({ connectionString: ADMIN_URL });
    await cleanup.connect();
    for (const role of [hrw.username, hro.username]) await cleanup.query(`drop role if exists ${role}`);
    await cleanup.end();
  });

  it("runs the engine's migrations on Create and Update, and leaves everything in place on Delete", async () => {
    const { handler } = await import("../../../functions/migrate/handler.js");
    const context = { awsRequestId: "req-mig", functionName: "poolgate-migrations", getRemainingTimeInMillis: () => 60_000 } as unknown as Context;
    const properties = {
      ServiceToken: "arn:aws:lambda:us-east-1:123456789012:function:provider",
      Engine: "postgres",
      Host: admin.hostname,
      Port: String(admin.port || 5432),
      Database: handlerDb.name,
      Tls: "disable",
      AdminSecretArn: arn("admin"),
      ReadWriteSecretArn: arn("rw"),
      ReadOnlySecretArn: arn("ro"),
      RunId: "1",
    };
    const base = { ServiceToken: properties.ServiceToken, ResponseURL: "https://example.invalid/", StackId: "stack", RequestId: "r", LogicalResourceId: "Migrations", ResourceType: "Custom::PoolgateSchemaMigrations" };
    const quiet = [vi.spyOn(process.stdout, "write").mockImplementation(() => true), vi.spyOn(process.stderr, "write").mockImplementation(() => true)];
    try {
      const created = await handler({ ...base, RequestType: "Create", ResourceProperties: properties }, context);
      expect(created).toMatchObject({ PhysicalResourceId: `poolgate-migrations/${handlerDb.name}`, Data: { Applied: "0001", Latest: "0001" } });
      const updated = await handler(
        { ...base, RequestType: "Update", PhysicalResourceId: created.PhysicalResourceId, ResourceProperties: { ...properties, RunId: "2" }, OldResourceProperties: properties },
        context,
      );
      expect(updated.Data?.Applied).toBe("");
      const deleted = await handler({ ...base, RequestType: "Delete", PhysicalResourceId: created.PhysicalResourceId, ResourceProperties: properties }, context);
      expect(deleted.PhysicalResourceId).toBe(created.PhysicalResourceId);
    } finally {
      for (const spy of quiet) spy.mockRestore();
    }
    const { rows } = await handlerDb.admin.query("select rolname from pg_roles where rolname = any($1) order by rolname", [[hrw.username, hro.username]]);
    expect(rows.map((row: { rolname: string }) => row.rolname)).toEqual([hro.username, hrw.username].sort());
    expect(secrets.calls("AWSPENDING")).toBeGreaterThanOrEqual(3);
  });
});

describe("logins on a server that checks passwords, over verified TLS", () => {
  let server: PasswordServer;
  const settings = () => ({ host: "127.0.0.1", port: server.port, database: "postgres", tls: "verify-full" as const, caCertificates: readCa() });
  let readCa: () => string;
  const app = { access: "read-write" as const, username: "app_rw", password: "app-password-1" };
  const reader = { access: "read-only" as const, username: "app_ro", password: "app-password-2" };
  const migrator = { username: "migrator", password: "migrator-password" };

  beforeAll(async () => {
    server = await startPasswordServer();
    const { readFileSync } = await import("node:fs");
    readCa = () => readFileSync(server.certificates.caFile, "utf8");
    await server.createRole(migrator.username, migrator.password);
    await server.admin(`alter role ${migrator.username} superuser`);
  }, 60000);

  afterAll(async () => {
    await server?.stop();
  });

  const migrate = (overrides: Partial<MigrationRun> = {}) =>
    runMigrations({ engine: postgresMigrationEngine, settings: settings(), admin: { current: migrator }, logins: [app, reader], migrations: loadMigrations(MIGRATIONS), grantScript: grantScript("postgres"), ...overrides });

  it("stores SCRAM verifiers the server accepts, and sets a drifted password again from the secret", async () => {
    expect((await migrate()).logins).toEqual({ app_rw: "created", app_ro: "created" });
    expect(await postgresMigrationEngine.canLogIn(settings(), app)).toBe(true);
    expect(await postgresMigrationEngine.canLogIn(settings(), { username: "app_rw", password: "wrong" })).toBe(false);
    const [stored] = await server.admin<{ rolpassword: string }>("select rolpassword from pg_authid where rolname = 'app_rw'");
    expect(stored?.rolpassword).toMatch(/^SCRAM-SHA-256\$4096:/);
    await server.setPassword("app_rw", "changed-by-hand");
    expect((await migrate()).logins.app_rw).toBe("password-set");
    expect(await postgresMigrationEngine.canLogIn(settings(), app)).toBe(true);
  });

  it("leaves a login mid-rotation alone, and logs in as the master's AWSPENDING when AWSCURRENT is refused", async () => {
    await server.setPassword("app_rw", "pending-password");
    expect((await migrate({ logins: [{ ...app, pendingPassword: "pending-password" }, reader] })).logins.app_rw).toBe("unchanged");
    expect(await postgresMigrationEngine.canLogIn(settings(), { username: "app_rw", password: "pending-password" })).toBe(true);
    const report = await migrate({ admin: { current: { ...migrator, password: "stale" }, pending: migrator }, logins: [{ ...app, password: "pending-password" }, reader] });
    expect(report.alreadyApplied).toBe(1);
    await expect(migrate({ admin: { current: { ...migrator, password: "stale" } } })).rejects.toMatchObject({ code: "28P01" });
  });
});
