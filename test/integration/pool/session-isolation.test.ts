/**
 * Principal A tries to leave state for principal B on a pooled session, in every way the team could
 * find; B then checks that none of it is visible. The pool has one connection, so B always gets the
 * very session A used. With room for both, each principal keeps its own session and pays no reset.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase } from "../../support/mysql.js";
import { createTestDatabase } from "../../support/postgres.js";

const TOKENS = { a: "isolation-a-token-0123456789abcdef0", b: "isolation-b-token-0123456789abcdef0" };
const A = bearer(TOKENS.a);
const B = bearer(TOKENS.b);
const SECRET = "secret-marker-9271";
/** Roles are server-wide: a name of this run's own, so parallel files and reruns never share one. */
const RUN = randomBytes(4).toString("hex");
const PG_ROLE = `isolation_other_role_${RUN}`;
const MYSQL_ROLE = `isolation_role_${RUN}`;

interface Leak {
  /** What A runs (in order; each its own request). */
  a: string[];
  /** What B runs, and the rows it must see. */
  b: string;
  expected: unknown[];
  /** B's statement must fail (the object A made must not exist for B). */
  fails?: boolean;
}

interface Target {
  name: string;
  setup(): Promise<{ url: string; admin(sql: string): Promise<unknown[]>; cleanup(): Promise<void> }>;
  leaks: Leak[];
}

const POSTGRES: Target = {
  name: "PostgreSQL",
  async setup() {
    const db = await createTestDatabase();
    await db.admin.query("create table ledger (id serial primary key, note text)");
    await db.admin.query("create sequence s");
    await db.admin.query(`create role ${PG_ROLE}`);
    await db.admin.query("create function set_path_inside() returns void language plpgsql set work_mem = '1MB' as $$ begin perform set_config('search_path', 'pg_temp', false); end $$");
    return {
      url: db.url,
      admin: async (sql) => (await db.admin.query(sql)).rows,
      cleanup: async () => {
        await db.drop();
        const { default: pg } = await import("pg");
        const { ADMIN_URL } = await import("../../support/postgres.js");
        const admin = new pg.Client({ connectionString: ADMIN_URL });
        await admin.connect();
        await admin.query(`drop role if exists ${PG_ROLE}`).finally(() => admin.end());
      },
    };
  },
  leaks: [
    { a: ["set search_path = pg_temp"], b: "select current_setting('search_path') as v", expected: [{ v: '"$user", public' }] },
    { a: ["select set_config('search_path', 'pg_temp', false)"], b: "select current_setting('search_path') as v", expected: [{ v: '"$user", public' }] },
    { a: ['select U&"set\\005fconfig"(\'search_path\', \'pg_temp\', false)'], b: "select current_setting('search_path') as v", expected: [{ v: '"$user", public' }] },
    { a: ["update pg_settings set setting = 'pg_temp' where name = 'search_path'"], b: "select current_setting('search_path') as v", expected: [{ v: '"$user", public' }] },
    { a: ["select set_path_inside()"], b: "select current_setting('search_path') as v, current_setting('work_mem') as m", expected: [{ v: '"$user", public', m: "4MB" }] },
    { a: ["set application_name = 'stolen'"], b: "select current_setting('application_name') as v", expected: [{ v: "poolgate" }] },
    { a: ["set standard_conforming_strings = off"], b: "select current_setting('standard_conforming_strings') as v", expected: [{ v: "on" }] },
    { a: [`set role ${PG_ROLE}`], b: "select current_user as v", expected: [{ v: "postgres" }] },
    { a: [`set session authorization ${PG_ROLE}`], b: "select session_user as s, current_user as c", expected: [{ s: "postgres", c: "postgres" }] },
    { a: ["set session characteristics as transaction read only"], b: "select current_setting('default_transaction_read_only') as v", expected: [{ v: "off" }] },
    { a: ["create temp table t (x int)"], b: "select * from t", expected: [], fails: true },
    { a: ["select 1 as x into pg_temp.t2"], b: "select * from t2", expected: [], fails: true },
    { a: ["create table pg_temp.t3 (x int)"], b: "select count(*)::int as n from pg_class where relnamespace = pg_my_temp_schema()", expected: [{ n: 0 }] },
    { a: ["create temp view v as select 1 as x"], b: "select * from v", expected: [], fails: true },
    { a: ["create function pg_temp.f() returns int language sql as 'select 42'"], b: "select pg_temp.f()", expected: [], fails: true },
    // The data-loss case: a temporary table shadowing a real one must not catch B's acknowledged write.
    { a: ["create temp table ledger (id int, note text)"], b: "insert into ledger (note) values ('b-wrote') returning note", expected: [{ note: "b-wrote" }] },
    // B's own statement is prepared too, so the marker is looked for without spelling it out.
    { a: [`prepare p as select '${SECRET}' as v`], b: "select count(*)::int as n from pg_prepared_statements where from_sql or strpos(statement, 'secret-' || 'marker') > 0", expected: [{ n: 0 }] },
    { a: [`select '${SECRET}' as v`], b: "select count(*)::int as n from pg_prepared_statements where strpos(statement, 'secret-' || 'marker') > 0", expected: [{ n: 0 }] },
    // The unnamed portal of B's own statement is listed too.
    { a: ["declare c cursor with hold for select 1"], b: "select count(*)::int as n from pg_cursors where name <> ''", expected: [{ n: 0 }] },
    { a: ["listen chan"], b: "select count(*)::int as n from pg_listening_channels()", expected: [{ n: 0 }] },
    { a: ["select pg_advisory_lock(42)"], b: "select count(*)::int as n from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()", expected: [{ n: 0 }] },
    { a: ["select nextval('s')"], b: "select currval('s')", expected: [], fails: true },
    { a: ["select nextval('s')"], b: "select lastval()", expected: [], fails: true },
    { a: ["insert into ledger (note) values ('a')"], b: "select lastval()", expected: [], fails: true },
  ],
};

const MYSQL: Target = {
  name: "MariaDB",
  async setup() {
    const db = await createTestMysqlDatabase();
    await db.query("create table ledger (id int auto_increment primary key, note text)");
    await db.admin.query(`create database if not exists ${db.name}_other`);
    await db.admin.query(`create role ${MYSQL_ROLE}`);
    await db.admin.query(`grant ${MYSQL_ROLE} to root@localhost, root@'127.0.0.1'`).catch(() => undefined);
    return {
      url: db.url,
      admin: (sql) => db.query(sql),
      cleanup: async () => {
        await db.admin.query(`drop database if exists ${db.name}_other`);
        await db.admin.query(`drop role if exists ${MYSQL_ROLE}`);
        await db.drop();
      },
    };
  },
  leaks: [
    { a: [`set @secret = '${SECRET}'`], b: "select @secret as v", expected: [{ v: null }] },
    { a: [`select @secret := '${SECRET}'`], b: "select @secret as v", expected: [{ v: null }] },
    { a: ["set session sql_mode = 'ANSI_QUOTES'"], b: "select @@session.sql_mode like '%ANSI_QUOTES%' as v", expected: [{ v: 0 }] },
    { a: ["set names latin1"], b: "select @@session.character_set_client as v", expected: [{ v: "utf8mb4" }] },
    { a: ["set session transaction read only"], b: "select @@session.tx_read_only as v", expected: [{ v: "0" }] },
    { a: ["set time_zone = '+05:00'"], b: "select @@session.time_zone as v", expected: [{ v: "+00:00" }] },
    // MariaDB names the value of a failed conversion in its warning: B must not read A's parameter there.
    { a: [`select cast('${SECRET}' as signed)`], b: "show warnings", expected: [] },
    { a: ["select * from no_such_table_anywhere"], b: "show errors", expected: [] },
    { a: ["create temporary table t (x int)"], b: "select * from t", expected: [], fails: true },
    { a: ["create temporary table ledger (id int, note text)"], b: "insert into ledger (note) values ('b-wrote')", expected: [] },
    { a: ["select get_lock('app_lock', 0)"], b: "select is_free_lock('app_lock') as v", expected: [{ v: 1 }] },
    { a: ["prepare s from 'select 1'"], b: "execute s", expected: [], fails: true },
    { a: [`set role ${MYSQL_ROLE}`], b: "select current_role() as v", expected: [{ v: null }] },
    { a: ["insert into ledger (note) values ('a')"], b: "select last_insert_id() as v", expected: [{ v: "0" }] },
  ],
};

for (const target of [POSTGRES, MYSQL]) {
  describe(`no state passes from one principal to another on ${target.name}`, () => {
    let gateway: TestGateway;
    let env: Awaited<ReturnType<Target["setup"]>>;
    let tokens: TokensFile;

    beforeAll(async () => {
      env = await target.setup();
      tokens = writeTokensFile(TOKENS);
      gateway = await startTestGateway({
        clusters: { default: { writerUrl: env.url } },
        pool: { maxSize: 1 },
        auth: { bearer: { tokensFile: tokens.path }, principals: { a: { clusters: { default: "read-write" } }, b: { clusters: { default: "read-write" } } } },
      });
    });

    afterAll(async () => {
      await gateway?.stop();
      await env?.cleanup();
      tokens?.remove();
    });

    it.each(target.leaks.map((leak) => [leak.a.join("; ").replaceAll(RUN, "<run>"), leak] as const))("after A's %j, B sees nothing of it", async (_name, leak) => {
      for (const sql of leak.a) {
        const answer = await gateway.post("/v1/query", { sql }, A);
        expect([200, 400], `${sql}: ${JSON.stringify(answer.body)}`).toContain(answer.status);
      }
      const seen = await gateway.post("/v1/query", { sql: leak.b }, B);
      if (leak.fails) {
        expect(seen.status, JSON.stringify(seen.body)).toBe(400);
      } else {
        expect(seen.status, JSON.stringify(seen.body)).toBe(200);
        expect(seen.body.rows).toEqual(leak.expected);
      }
    });

    it("lets B's write through a name A shadowed reach the real table", async () => {
      const rows = (await env.admin("select note from ledger where note = 'b-wrote'")) as { note: string }[];
      expect(rows.map((row) => row.note)).toEqual(["b-wrote"]);
    });
  });
}

describe("sessions stay with their principal while the pool has room", () => {
  let gateway: TestGateway;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let tokens: TokensFile;

  beforeAll(async () => {
    db = await createTestDatabase();
    tokens = writeTokensFile(TOKENS);
    gateway = await startTestGateway({
      clusters: { default: { writerUrl: db.url } },
      pool: { maxSize: 2 },
      auth: { bearer: { tokensFile: tokens.path }, principals: { a: { clusters: { default: "read-write" } }, b: { clusters: { default: "read-write" } } } },
    });
    // Serving starts once the pools are warm, as the gateway's main does: while a session is still being
    // opened, a principal's first request takes the other's idle one (with the full reset) rather than wait.
    for (const cluster of gateway.gateway.clusters.values()) for (const { pool } of cluster.pools.all()) expect(await pool.whenWarm(10_000)).toBe(true);
  });

  afterAll(async () => {
    await gateway?.stop();
    await db?.drop();
    tokens?.remove();
  });

  it("gives each principal back its own session, so interleaved callers need no reset", async () => {
    const pidOf = async (who: Record<string, string>) => (await gateway.post("/v1/query", { sql: "select pg_backend_pid() as pid" }, who)).body.rows[0].pid as number;
    const a = new Set<number>();
    const b = new Set<number>();
    for (let i = 0; i < 10; i++) {
      a.add(await pidOf(A));
      b.add(await pidOf(B));
    }
    expect(a.size).toBe(1);
    expect(b.size).toBe(1);
    expect([...a][0]).not.toBe([...b][0]);
    // The gateway's own prepared statements survived: no DISCARD ALL ran between these requests.
    const prepared = await gateway.post("/v1/query", { sql: "select count(*)::int as n from pg_prepared_statements" }, A);
    expect(prepared.body.rows[0].n).toBeGreaterThan(0);
  });
});
