/**
 * A read-only principal against every write and escape the team could find, through every route
 * (native query, batch and interactive transaction; Data API Execute, BatchExecute and transaction),
 * on both engines, with a read-only database login and with the one login of the quick start. After
 * each attempt the database is checked directly: no row, sequence value, table, lock or killed session
 * may be left behind, whatever the answer was. Inside transactions the locks are checked while the
 * transaction is still open.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase } from "../../support/mysql.js";
import { createTestDatabase } from "../../support/postgres.js";
import { createMysqlLogins, createPostgresLogins, type DatabaseLogins } from "../../support/database-logins.js";

const TOKENS = { reader: "matrix-reader-token-0123456789abcdef", writer: "matrix-writer-token-0123456789abcdef" };
const ARNS = { resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:app", secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:app" };
const ROUTES = ["query", "batch", "transaction", "data-api-execute", "data-api-batch", "data-api-transaction"] as const;
type Route = (typeof ROUTES)[number];

interface Attack {
  sql: string;
  /**
   * Trusted code that escapes READ ONLY, which the quick start's one login cannot stop: its writes
   * are rolled back, but it advances a sequence (nextval is not transactional) and holds its row
   * locks until the transaction ends. A read-only login stops it.
   */
  trustedCodeEscapes?: boolean;
}

interface Environment {
  url: string;
  /** The logins of the documented grant script: the read-only one serves the read-only principal. */
  logins: DatabaseLogins;
  /** Everything an attempt must leave as it found it. */
  snapshot(): Promise<Record<string, unknown>>;
  /** Locks and other holds while a transaction is open (must be none). */
  holds(): Promise<Record<string, unknown>>;
  victim: number;
  victimAlive(): Promise<boolean>;
  cleanup(): Promise<void>;
}

interface Target {
  name: string;
  attacks(victim: number, outfile: string): Attack[];
  setup(): Promise<Environment>;
}

const POSTGRES: Target = {
  name: "PostgreSQL",
  attacks: (victim) => [
    { sql: "insert into ledger (note) values ('x')" },
    { sql: "select 1 -- x\r; insert into ledger (note) values ('cr')" },
    { sql: "select 1 -- x\r; set transaction read write; insert into ledger (note) values ('cr')" },
    { sql: "select 1; commit; insert into ledger (note) values ('multi')" },
    { sql: "set transaction read write" },
    { sql: "select nextval('ledger_id_seq')" },
    { sql: "select setval('ledger_id_seq', 1000)" },
    { sql: "select add_entry()" },
    { sql: "select escape_and_write()", trustedCodeEscapes: true },
    { sql: "do $$ begin insert into ledger (note) values ('do'); end $$" },
    { sql: "call write_proc()" },
    { sql: "select * into pg_temp.shadow from ledger" },
    { sql: "create temp table t (x int)" },
    { sql: "create table made (x int)" },
    { sql: "lock table ledger in access exclusive mode" },
    { sql: "select * from ledger for update" },
    { sql: `select pg_terminate_backend(${victim})` },
    { sql: `select pg_cancel_backend(${victim})` },
    { sql: "select pg_advisory_lock(42)" },
    { sql: "select pg_try_advisory_lock(43)" },
    { sql: "update pg_settings set setting = 'pg_temp' where name = 'search_path'" },
    { sql: "select set_config('search_path', 'pg_temp', false)" },
    { sql: 'select U&"set\\005fconfig"(\'search_path\', \'pg_temp\', false)' },
    { sql: "commit" },
    { sql: "with x as (insert into ledger (note) values ('cte') returning *) select * from x" },
    { sql: "explain analyze insert into ledger (note) values ('ex')" },
    { sql: "prepare p as insert into ledger (note) values ('p')" },
    { sql: "listen chan" },
    { sql: "select pg_notify('chan', 'x')" },
    { sql: "select lo_create(0)" },
    { sql: "copy ledger from program 'true'" },
    { sql: "declare c cursor with hold for select * from ledger" },
  ],
  async setup() {
    const db = await createTestDatabase();
    await db.admin.query("create table ledger (id serial primary key, note text)");
    await db.admin.query("create function add_entry() returns int language sql as $$ insert into ledger (note) values ('fn') returning id $$");
    await db.admin.query(
      "create function escape_and_write() returns int language plpgsql as $$ begin reset transaction_read_only; insert into ledger (note) values ('escaped'); return 1; end $$",
    );
    await db.admin.query("create procedure write_proc() language sql as $$ insert into ledger (note) values ('proc') $$");
    const logins = await createPostgresLogins(db);
    const victim = new pg.Client({ connectionString: db.url });
    await victim.connect();
    victim.on("error", () => undefined);
    const pid = Number((await victim.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]?.pid);
    const one = async (sql: string) => (await db.admin.query(sql)).rows[0] as Record<string, unknown>;
    return {
      url: db.url,
      logins,
      victim: pid,
      snapshot: async () => ({
        ...(await one("select count(*)::int as rows from ledger")),
        ...(await one("select last_value::text as sequence, is_called from ledger_id_seq")),
        ...(await one("select string_agg(relname, ',' order by relname) as relations from pg_class where relnamespace = 'public'::regnamespace")),
        ...(await one("select count(*)::int as large_objects from pg_largeobject_metadata")),
        ...(await one(`select count(*)::int as temp_relations from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname like 'pg_temp%'`)),
        ...(await one("select count(*)::int as advisory_locks from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())")),
      }),
      holds: async () => ({
        ...(await one(
          "select count(*)::int as strong_locks from pg_locks l join pg_stat_activity a using (pid) where a.application_name = 'poolgate' and a.datname = current_database() and l.locktype = 'relation' and l.mode <> 'AccessShareLock'",
        )),
        ...(await one("select count(*)::int as advisory_locks from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())")),
      }),
      victimAlive: () => victim.query("select 1").then(() => true, () => false),
      cleanup: async () => {
        await victim.end().catch(() => undefined);
        await logins.drop();
      },
    };
  },
};

const MYSQL: Target = {
  name: "MariaDB",
  attacks: (victim, outfile) => [
    { sql: "insert into ledger (note) values ('x')" },
    { sql: "select 1; insert into ledger (note) values ('multi')" },
    { sql: "select 1 # x\r; insert into ledger (note) values ('cr')" },
    { sql: "select 1 -- x\r; insert into ledger (note) values ('cr')" },
    { sql: "/*!50000 insert into ledger (note) values ('exec') */" },
    { sql: "/*M! insert into ledger (note) values ('maria') */" },
    { sql: "select 'a\\'; insert into ledger (note) values ('esc'); -- '" },
    { sql: "select add_entry()" },
    { sql: "call make_table()" },
    { sql: "create table made (x int)" },
    { sql: "create temporary table t (x int)" },
    { sql: "set session transaction read write" },
    { sql: "/*!50000 set @@session.tx_read_only = 0 */" },
    { sql: `kill ${victim}` },
    { sql: `kill query ${victim}` },
    { sql: "select get_lock('app_lock', 0)" },
    { sql: "do get_lock('app_lock', 0)" },
    { sql: "select load_file('/etc/hostname') is not null" },
    { sql: "lock tables ledger write" },
    { sql: "select * from ledger for update" },
    { sql: "select 1 into @x" },
    { sql: `select * from ledger into outfile '${outfile}'` },
    { sql: "start transaction read write" },
    { sql: "commit" },
    { sql: "xa start 'x'" },
    { sql: "prepare s from 'insert into ledger (note) values (1)'" },
    { sql: "handler ledger open" },
    { sql: "truncate ledger" },
    { sql: "replace into ledger (id, note) values (1, 'r')" },
  ],
  async setup() {
    const db = await createTestMysqlDatabase();
    await db.query("create table ledger (id int auto_increment primary key, note text)");
    await db.query("create function add_entry() returns int modifies sql data begin insert into ledger (note) values ('fn'); return last_insert_id(); end");
    await db.query("create procedure make_table() begin create table made_by_proc (x int); end");
    const logins = await createMysqlLogins(db);
    const [[{ id }]] = (await db.admin.query("select connection_id() as id")) as unknown as [[{ id: number }]];
    const victim = db.admin;
    const one = async (sql: string, params: unknown[] = []) => ((await db.query(sql, params))[0] ?? {});
    return {
      url: db.url,
      logins,
      victim: Number(id), // the admin session itself is the victim
      snapshot: async () => ({
        ...(await one("select count(*) as `rows` from ledger")),
        ...(await one("select group_concat(table_name order by table_name) as relations from information_schema.tables where table_schema = ?", [db.name])),
        ...(await one("select auto_increment as sequence from information_schema.tables where table_schema = ? and table_name = 'ledger'", [db.name])),
        ...(await one("select is_free_lock('app_lock') as free_lock")),
      }),
      holds: async () => ({
        ...(await one("select is_free_lock('app_lock') as free_lock")),
        ...(await one("select count(*) as locked_tables from information_schema.processlist where state like '%lock%' and db = ?", [db.name])),
      }),
      victimAlive: () => victim.query("select 1").then(() => true, () => false),
      cleanup: () => logins.drop(),
    };
  },
};

async function attempt(gateway: TestGateway, route: Route, sql: string, during: () => Promise<void>): Promise<number> {
  const as = bearer(TOKENS.reader);
  switch (route) {
    case "query":
      return (await gateway.post("/v1/query", { sql }, as)).status;
    case "batch":
      return (await gateway.post("/v1/batch", { statements: [{ sql: "select 1" }, { sql }] }, as)).status;
    case "transaction": {
      const id = (await gateway.post("/v1/transactions", {}, as)).body.transactionId as string;
      const status = (await gateway.post("/v1/query", { sql, transactionId: id }, as)).status;
      await during();
      await gateway.post(`/v1/transactions/${id}/commit`, undefined, as);
      return status;
    }
    case "data-api-execute":
      return (await gateway.post("/Execute", { ...ARNS, sql }, as)).status;
    case "data-api-batch":
      return (await gateway.post("/BatchExecute", { ...ARNS, sql, parameterSets: [[]] }, as)).status;
    case "data-api-transaction": {
      const id = (await gateway.post("/BeginTransaction", ARNS, as)).body.transactionId as string;
      const status = (await gateway.post("/Execute", { ...ARNS, sql, transactionId: id }, as)).status;
      await during();
      await gateway.post("/CommitTransaction", { ...ARNS, transactionId: id }, as);
      return status;
    }
  }
}

for (const target of [POSTGRES, MYSQL]) {
  for (const mode of ["a read-only login", "the one login of the quick start"] as const) {
    describe(`a read-only principal on ${target.name} with ${mode}`, () => {
      let gateway: TestGateway;
      let env: Environment;
      let tokens: TokensFile;
      const outfile = `/tmp/poolgate-outfile-${randomBytes(4).toString("hex")}`;

      beforeAll(async () => {
        env = await target.setup();
        tokens = writeTokensFile(TOKENS);
        const logins = mode === "a read-only login" ? { readOnly: { source: "password" as const, ...env.logins.readOnly } } : undefined;
        gateway = await startTestGateway({
          clusters: { default: { writerUrl: env.url, ...(logins ? { logins } : {}) } },
          pool: { maxSize: 2 },
          auth: { bearer: { tokensFile: tokens.path }, principals: { reader: { clusters: { default: "read-only" } }, writer: { clusters: { default: "read-write" } } } },
        });
      });

      afterAll(async () => {
        await gateway?.stop();
        await env?.cleanup();
        tokens?.remove();
      });

      it("reads on every route", async () => {
        for (const route of ROUTES) expect(await attempt(gateway, route, "select count(*) from ledger", async () => undefined), route).toBe(200);
      });

      it("leaves no write, sequence change, object, lock or killed session behind, whatever the route and spelling", async () => {
        let baseline = await env.snapshot();
        for (const attack of target.attacks(env.victim, outfile)) {
          for (const route of ROUTES) {
            const where = `${route}: ${JSON.stringify(attack.sql)}`;
            const oneLoginGap = attack.trustedCodeEscapes === true && mode !== "a read-only login";
            const status = await attempt(gateway, route, attack.sql, async () => {
              const holds = await env.holds();
              if (!oneLoginGap) expect(holds, `while the transaction is open, ${where}`).toEqual(quiet(holds));
            });
            expect(status, where).not.toBe(500);
            const after = await env.snapshot();
            if (oneLoginGap) {
              expect(withoutSequence(after), where).toEqual(withoutSequence(baseline));
              baseline = after;
            } else {
              expect(after, where).toEqual(baseline);
            }
            expect(await env.victimAlive(), where).toBe(true);
          }
        }
        expect(existsSync(outfile)).toBe(false);
      });

      it("leaves the read-write principal able to write (the control)", async () => {
        expect((await gateway.post("/v1/query", { sql: "insert into ledger (note) values ('ok')" }, bearer(TOKENS.writer))).status).toBe(200);
      });
    });
  }
}

/** A snapshot without the sequence, which trusted code may advance under the one login. */
function withoutSequence(snapshot: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(snapshot).filter(([key]) => key !== "sequence" && key !== "is_called"));
}

/** What "holding nothing" reads as: no strong or advisory lock, the application's named lock free. */
function quiet(holds: Record<string, unknown>): Record<string, unknown> {
  const none: Record<string, unknown> = {};
  for (const key of Object.keys(holds)) none[key] = key === "free_lock" ? 1 : 0;
  return none;
}
