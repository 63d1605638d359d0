/**
 * The resilience suite (resilience-suite.ts) on the real local PostgreSQL, then what only PostgreSQL
 * has here: Aurora DSQL's optimistic-concurrency code (OC000) retried, and SQL that controls its own
 * transactions.
 */
import { describe, expect, it } from "vitest";
import { createTestDatabase, gatewaySessions } from "../../support/postgres.js";
import { defineResilienceSuite } from "./resilience-suite.js";

defineResilienceSuite({
  name: "the local PostgreSQL server",
  async setup() {
    const db = await createTestDatabase();
    await db.admin.query("create table counter (id int primary key, n int not null); insert into counter values (1, 0), (2, 0)");
    await db.admin.query("create table log (tag text not null)");
    await db.admin.query("create sequence flaky_calls");
    // Fails with Aurora DSQL's optimistic-concurrency code until it has been called three times.
    await db.admin.query(`create function dsql_conflict_twice() returns int language plpgsql as $$
      begin
        if nextval('flaky_calls') <= 2 then raise exception 'change conflicts with another transaction' using errcode = 'OC000'; end if;
        return 1;
      end $$`);
    return {
      url: db.url,
      admin: async (sql) => void (await db.admin.query(sql)),
      countLog: async (tag) => (await db.admin.query<{ n: number }>("select count(*)::int as n from log where tag = $1", [tag])).rows[0]?.n ?? 0,
      counter: async (id) => (await db.admin.query<{ n: number }>("select n from counter where id = $1", [id])).rows[0]?.n ?? Number.NaN,
      sessions: async () => (await gatewaySessions(db)).map((s) => ({ id: s.pid, statement: s.query, busy: s.state !== "idle" })),
      kill: async (pattern) => {
        await db.admin.query(
          "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name = 'poolgate' and pid <> pg_backend_pid() and ($2::text is null or (state = 'active' and query like $2))",
          [db.name, pattern === undefined ? null : `%${pattern}%`],
        );
      },
      drop: () => db.drop(),
    };
  },
  sql: {
    sleep: (seconds) => `select pg_sleep(${seconds})`,
    slowInsert: { sql: "insert into log select 'unknown' from pg_sleep(3)", marker: "'unknown' from pg_sleep" },
    sleepUntilMarker: "select pg_sleep(case when count(*) = 0 then 3 else 0 end) /* batch-sleep */ from log where tag = 'marker'",
    readOnlyWrite: { sql: "begin read only; insert into log values ('read-only')", database: { sqlstate: "25006" } },
    sessionId: "select pg_backend_pid() as id",
    fail: "select 1/0",
    bigResult: "select repeat('x', 1000) from generate_series(1, 20000)",
    sessionChanges: "set statement_timeout = 1",
    createTemp: "create temp table t (x int)",
  },
  failures: (query, gw) => [
    () => query("select $1::int", { params: ["not a number"] }),
    async () => {
      const begun = await gw.post("/v1/transactions", {});
      if (begun.status !== 201) return begun;
      await query("select 1/0", { transactionId: begun.body.transactionId });
      return gw.post(`/v1/transactions/${begun.body.transactionId}/commit`, undefined);
    },
  ],
  cleanSession: {
    sql: "select current_setting('statement_timeout') as t, (select count(*)::int from pg_class where relname = 't' and relpersistence = 't') as temps",
    rows: [{ t: "0", temps: 0 }],
  },
  engineCases: (context) => {
    describe("PostgreSQL retries and transaction control", () => {
      it("retries a batch through optimistic-concurrency conflicts (OC000) and says how many attempts it took", async () => {
        const { gw, db } = context();
        const response = await gw.post("/v1/batch", {
          statements: [{ sql: "insert into log values ('oc')" }, { sql: "select dsql_conflict_twice() as ok" }],
        });
        expect(response.status).toBe(200);
        expect(response.body.attempts).toBe(3);
        expect(await db.countLog("oc")).toBe(1);
      });

      it("refuses SQL that controls its own transactions inside an interactive transaction or a batch, which stay usable", async () => {
        const { gw, query } = context();
        const id = (await gw.post("/v1/transactions", {})).body.transactionId;
        const refused = await query("commit", { transactionId: id });
        expect(refused.status).toBe(400);
        expect(refused.body.error.code).toBe("INVALID_REQUEST");
        await query("insert into log values ('tx-after-refusal')", { transactionId: id });
        expect((await gw.post(`/v1/transactions/${id}/commit`, undefined)).body.outcome).toBe("committed");
        const batch = await gw.post("/v1/batch", { statements: [{ sql: "insert into log values ('b')" }, { sql: "commit" }] });
        expect(batch.body.error).toMatchObject({ code: "INVALID_REQUEST", issues: [{ path: "statements.1.sql" }] });
      });

      it("runs SQL with its own COMMIT once, and a timeout after that COMMIT is reported as an unknown outcome, not as no effect", async () => {
        const { db, query } = context();
        const response = await query("insert into log values ('self-committed'); commit; select pg_sleep(30)", { timeoutMs: 300 });
        expect(response.status).toBe(502);
        expect(response.body.error).toMatchObject({ code: "OUTCOME_UNKNOWN", attempts: 1 });
        expect(await db.countLog("self-committed")).toBe(1);
      });
    });
  },
});
