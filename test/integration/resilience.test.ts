/**
 * Through the HTTP API against the real local PostgreSQL: timeouts that cancel on the server, safe
 * retries (and no retry when the outcome is unknown), eviction of killed sessions, and a pool that
 * ends clean after a thousand failing requests.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { createTestDatabase, gatewaySessions, type TestDatabase } from "../support/postgres.js";
import { waitFor } from "../support/wait-for.js";

let db: TestDatabase;
let gw: TestGateway;

const query = (sql: string, extra: Record<string, unknown> = {}) => gw.post("/v1/query", { sql, ...extra });

/** Terminates the gateway's sessions that are running a statement matching `pattern`, once it runs. */
async function terminateWhenRunning(pattern: string): Promise<void> {
  await waitFor(async () => (await gatewaySessions(db)).some((s) => s.state === "active" && s.query.includes(pattern)), 5000, pattern);
  await db.admin.query(
    "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name = 'poolgate' and state = 'active' and query like $2",
    [db.name, `%${pattern}%`],
  );
}

beforeAll(async () => {
  db = await createTestDatabase();
  gw = await startTestGateway({
    clusters: { default: { writerUrl: db.url } },
    pool: { maxSize: 4, acquireTimeoutMs: 3000 },
    transactions: { idleTimeoutMs: 200 },
    retry: { maxAttempts: 30, baseDelayMs: 5, maxDelayMs: 100, maxTotalMs: 20000 },
  });
  await db.admin.query("create table counter (id int primary key, n int not null); insert into counter values (1, 0)");
  await db.admin.query("create table log (tag text not null)");
  await db.admin.query("create sequence flaky_calls");
  // Fails with Aurora DSQL's optimistic-concurrency code until it has been called three times.
  await db.admin.query(`create function dsql_conflict_twice() returns int language plpgsql as $$
    begin
      if nextval('flaky_calls') <= 2 then raise exception 'change conflicts with another transaction' using errcode = 'OC000'; end if;
      return 1;
    end $$`);
});

afterAll(async () => {
  await gw?.stop();
  await db?.drop();
});

describe("timeouts and retries", () => {
  it("cancels a statement on the server when its timeout expires", async () => {
    const started = Date.now();
    const response = await query("select pg_sleep(30) /* cancel-me */", { timeoutMs: 200 });
    expect(response.status).toBe(504);
    expect(response.body.error).toMatchObject({ code: "STATEMENT_TIMEOUT", retryable: false });
    expect(Date.now() - started).toBeLessThan(5000);
    const running = (await gatewaySessions(db)).filter((s) => s.state === "active" && s.query.includes("cancel-me"));
    expect(running).toEqual([]);
    expect((await query("select 1 as ok")).body.rows).toEqual([{ ok: 1 }]);
  });

  it("retries a batch through optimistic-concurrency conflicts (OC000) and says how many attempts it took", async () => {
    const response = await gw.post("/v1/batch", {
      statements: [{ sql: "insert into log values ('oc')" }, { sql: "select dsql_conflict_twice() as ok" }],
    });
    expect(response.status).toBe(200);
    expect(response.body.attempts).toBe(3);
    const { rows } = await db.admin.query("select count(*)::int as n from log where tag = 'oc'");
    expect(rows[0].n).toBe(1);
  });

  it("ten concurrent serializable increments all land exactly once through automatic retries", async () => {
    const increment = () =>
      gw.post("/v1/batch", {
        isolation: "serializable",
        statements: [
          { sql: "select n from counter where id = 1" },
          { sql: "select pg_sleep(0.02)" },
          { sql: "update counter set n = n + 1 where id = 1" },
        ],
      });
    const responses = await Promise.all(Array.from({ length: 10 }, increment));
    expect(responses.map((r) => r.status)).toEqual(new Array(10).fill(200));
    const { rows } = await db.admin.query("select n from counter where id = 1");
    expect(rows[0].n).toBe(10);
    const attempts = responses.map((r) => r.body.attempts as number);
    expect(Math.max(...attempts)).toBeGreaterThan(1);
  });

  it("never re-runs a statement whose connection died after it was sent: the outcome is unknown", async () => {
    const pending = query("insert into log select 'unknown' from pg_sleep(3)");
    await terminateWhenRunning("'unknown' from pg_sleep");
    const response = await pending;
    expect(response.status).toBe(502);
    expect(response.body.error).toMatchObject({ code: "OUTCOME_UNKNOWN", retryable: false, attempts: 1 });
    expect((await query("select 1 as ok")).status).toBe(200);
  });

  it("re-runs a batch whose connection died before COMMIT, applying it once", async () => {
    const pending = gw.post("/v1/batch", {
      statements: [
        { sql: "insert into log values ('once')" },
        { sql: "select pg_sleep(case when count(*) = 0 then 3 else 0 end) /* batch-sleep */ from log where tag = 'marker'" },
      ],
    });
    await terminateWhenRunning("batch-sleep");
    await db.admin.query("insert into log values ('marker')");
    const response = await pending;
    expect(response.status).toBe(200);
    expect(response.body.attempts).toBe(2);
    const { rows } = await db.admin.query("select count(*)::int as n from log where tag = 'once'");
    expect(rows[0].n).toBe(1);
  });
});

describe("read-only refusals", () => {
  it("treats a write refused by the session's own READ ONLY setting as an error, not a failover", async () => {
    const failoversBefore = ((await gw.get("/v1/admin/topology")).body.clusters.default.failovers as unknown[]).length;
    const response = await query("begin read only; insert into log values ('read-only')");
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: "DATABASE_ERROR", attempts: 1, database: { sqlstate: "25006" } });
    expect((await gw.get("/v1/admin/topology")).body.clusters.default.failovers).toHaveLength(failoversBefore);
    expect((await query("insert into log values ('writable-again')")).status).toBe(200);
  });
});

describe("SQL that controls its own transactions", () => {
  it("is refused inside an interactive transaction or a batch, which stay usable", async () => {
    const id = (await gw.post("/v1/transactions", {})).body.transactionId;
    const refused = await query("commit", { transactionId: id });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("INVALID_REQUEST");
    await query("insert into log values ('tx-after-refusal')", { transactionId: id });
    expect((await gw.post(`/v1/transactions/${id}/commit`, undefined)).body.outcome).toBe("committed");
    const batch = await gw.post("/v1/batch", { statements: [{ sql: "insert into log values ('b')" }, { sql: "commit" }] });
    expect(batch.body.error).toMatchObject({ code: "INVALID_REQUEST", issues: [{ path: "statements.1.sql" }] });
  });

  it("is run once, and a timeout after its own COMMIT is reported as an unknown outcome, not as no effect", async () => {
    const response = await query("insert into log values ('self-committed'); commit; select pg_sleep(30)", { timeoutMs: 300 });
    expect(response.status).toBe(502);
    expect(response.body.error).toMatchObject({ code: "OUTCOME_UNKNOWN", attempts: 1 });
    const { rows } = await db.admin.query("select count(*)::int as n from log where tag = 'self-committed'");
    expect(rows[0].n).toBe(1);
  });
});

describe("pool hygiene through the API", () => {
  it("evicts sessions killed with pg_terminate_backend and serves the next request", async () => {
    await query("select 1");
    const before = (await gw.get("/healthz")).body.clusters.default.pool.evicted as number;
    const killed = (await gatewaySessions(db)).map((s) => s.pid);
    await db.admin.query("select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name = 'poolgate'", [
      db.name,
    ]);
    await waitFor(async () => (await gw.get("/healthz")).body.clusters.default.pool.evicted >= before + killed.length, 5000, "evictions");
    const response = await query("select pg_backend_pid() as pid");
    expect(response.status).toBe(200);
    expect(killed).not.toContain(response.body.rows[0].pid);
  });

  it("ends with every connection idle and no extra sessions after 1,000 failing requests of every kind", async () => {
    const failures: (() => Promise<{ status: number }>)[] = [
      () => query("selec 1"),
      () => query("select 1/0"),
      () => query("insert into counter values (1, 0)"),
      () => query("select $1::int", { params: ["not a number"] }),
      () => query("select repeat('x', 1000) from generate_series(1, 20000)"),
      () => gw.post("/v1/query", '{"sql": '),
      () => gw.post("/v1/query", { sql: "select 1", unknown: 1 }),
      () => gw.post("/v1/query", "select 1", { "content-type": "text/plain" }),
      () => query("select 1", { transactionId: "00000000-0000-0000-0000-000000000000" }),
      () => gw.post("/v1/batch", { statements: [{ sql: "insert into log values ('x')" }, { sql: "select 1/0" }] }),
      () => query("set statement_timeout = 1; select 1/0"),
      () => query("begin; create temp table t (x int); select 1/0"),
      async () => {
        const begun = await gw.post("/v1/transactions", {});
        await query("select 1/0", { transactionId: begun.body.transactionId });
        return gw.post(`/v1/transactions/${begun.body.transactionId}/commit`, undefined);
      },
      async () => {
        const begun = await gw.post("/v1/transactions", {});
        return query("select 1/0", { transactionId: begun.body.transactionId }); // abandoned: expires
      },
    ];
    let failed = 0;
    const workers = Array.from({ length: 8 }, async (_, worker) => {
      for (let i = worker; i < 1000; i += 8) {
        const failure = failures[i % failures.length] as () => Promise<{ status: number }>;
        if ((await failure()).status >= 400) failed++;
      }
    });
    // A few statement timeouts among them.
    const timeouts = Array.from({ length: 5 }, () => query("select pg_sleep(5)", { timeoutMs: 50 }));
    await Promise.all([...workers, ...timeouts]);
    expect(failed).toBe(1000);

    await waitFor(
      async () => {
        const pool = (await gw.get("/healthz")).body.clusters.default;
        return pool.openTransactions === 0 && pool.pool.active === 0 && pool.pool.waiting === 0;
      },
      5000,
      "every connection idle",
    );
    const pool = (await gw.get("/healthz")).body.clusters.default.pool;
    expect(pool.total).toBeLessThanOrEqual(4);
    expect(pool.idle).toBe(pool.total);
    const sessions = await gatewaySessions(db);
    expect(sessions.length).toBe(pool.total);
    expect(sessions.every((s) => s.state === "idle")).toBe(true);
    const settings = await query(
      "select current_setting('statement_timeout') as t, (select count(*)::int from pg_class where relname = 't' and relpersistence = 't') as temps",
    );
    expect(settings.body.rows).toEqual([{ t: "0", temps: 0 }]);
    const { rows } = await db.admin.query("select count(*)::int as n from log where tag = 'x'");
    expect(rows[0].n).toBe(0);
  });
});
