/**
 * The pool guarantees of the PostgreSQL engine, on the real local MariaDB through the MySQL engine:
 * timeouts that stop the statement on the server (KILL QUERY), deadlocks and lock-wait timeouts
 * retried as a whole, no retry when the outcome is unknown, eviction of killed sessions, and a pool
 * that ends clean after a thousand failing requests.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait-for.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { mysqlSeries } from "./core-suite.js";
import { createTestMysqlDatabase, mysqlGatewaySessions, type TestMysqlDatabase } from "../support/mysql.js";

let db: TestMysqlDatabase;
let gw: TestGateway;

const query = (sql: string, extra: Record<string, unknown> = {}) => gw.post("/v1/query", { sql, ...extra });
const countLog = async (tag: string) => Number((await db.query<{ n: number }>("select count(*) as n from log where tag = ?", [tag]))[0]?.n);

/** Kills the gateway's sessions that are running a statement matching `pattern`, once it runs. */
async function killWhenRunning(pattern: string): Promise<void> {
  await waitFor(async () => (await mysqlGatewaySessions(db)).some((s) => s.info?.includes(pattern)), 5000, pattern);
  for (const session of await mysqlGatewaySessions(db)) {
    if (session.info?.includes(pattern)) await db.admin.query(`KILL ${Number(session.id)}`);
  }
}

beforeAll(async () => {
  db = await createTestMysqlDatabase();
  gw = await startTestGateway({
    clusters: { default: { writerUrl: db.url } },
    pool: { maxSize: 4, acquireTimeoutMs: 3000 },
    transactions: { idleTimeoutMs: 200 },
    retry: { maxAttempts: 30, baseDelayMs: 5, maxDelayMs: 100, maxTotalMs: 20000 },
  });
  await db.query("create table counter (id int primary key, n int not null) engine=InnoDB");
  await db.query("insert into counter values (1, 0), (2, 0)");
  await db.query("create table log (tag varchar(40) not null) engine=InnoDB");
});

afterAll(async () => {
  await gw?.stop();
  await db?.drop();
});

describe("MySQL timeouts and retries", () => {
  it("stops a statement on the server with KILL QUERY when its timeout expires, and keeps the session", async () => {
    const before = (await mysqlGatewaySessions(db)).map((s) => s.id);
    const started = Date.now();
    const response = await query("select sleep(30) /* cancel-me */", { timeoutMs: 200 });
    expect(response.status).toBe(504);
    expect(response.body.error).toMatchObject({ code: "STATEMENT_TIMEOUT", retryable: false });
    expect(Date.now() - started).toBeLessThan(5000);
    const running = (await mysqlGatewaySessions(db)).filter((s) => s.info?.includes("cancel-me"));
    expect(running).toEqual([]);
    expect((await query("select 1 as ok")).body.rows).toEqual([{ ok: 1 }]);
    // The session the statement ran on survived: no new session was needed.
    expect((await mysqlGatewaySessions(db)).map((s) => s.id)).toEqual(before);
  });

  it("ten concurrent serializable increments all land exactly once through deadlock retries (1213)", async () => {
    const increment = () =>
      gw.post("/v1/batch", {
        isolation: "serializable",
        statements: [
          { sql: "select n from counter where id = 1" },
          { sql: "select sleep(0.02)" },
          { sql: "update counter set n = n + 1 where id = 1" },
        ],
      });
    const responses = await Promise.all(Array.from({ length: 10 }, increment));
    expect(responses.map((r) => r.status)).toEqual(new Array(10).fill(200));
    expect((await db.query<{ n: number }>("select n from counter where id = 1"))[0]?.n).toBe(10);
    const attempts = responses.map((r) => r.body.attempts as number);
    expect(Math.max(...attempts)).toBeGreaterThan(1);
  });

  it("retries a batch that hit a lock-wait timeout (1205) until the lock is released", async () => {
    const holder = await (await import("mysql2/promise")).createConnection({ uri: db.url });
    try {
      await holder.query("start transaction");
      await holder.query("select * from counter where id = 2 for update");
      const pending = gw.post("/v1/batch", {
        statements: [{ sql: "set innodb_lock_wait_timeout = 1" }, { sql: "update counter set n = n + 1 where id = 2" }],
      });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await holder.query("commit");
      const response = await pending;
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body.attempts).toBeGreaterThan(1);
      expect((await db.query<{ n: number }>("select n from counter where id = 2"))[0]?.n).toBe(1);
    } finally {
      await holder.end();
    }
  });

  it("ends a transaction that deadlocked: the statement, later statements and COMMIT answer TRANSACTION_ABORTED, nothing of it stays", async () => {
    await db.query("insert into counter values (3, 0), (4, 0)");
    const first = (await gw.post("/v1/transactions", {})).body.transactionId;
    const second = (await gw.post("/v1/transactions", {})).body.transactionId;
    expect((await query("update counter set n = n + 1 where id = 3", { transactionId: first })).status).toBe(200);
    expect((await query("update counter set n = n + 1 where id = 4", { transactionId: second })).status).toBe(200);
    // Each now waits for the other's row lock: InnoDB picks a victim and rolls its transaction back.
    const [a, b] = await Promise.all([
      query("update counter set n = n + 10 where id = 4", { transactionId: first }),
      query("update counter set n = n + 10 where id = 3", { transactionId: second }),
    ]);
    const outcomes = [a, b].map((response) => (response.status === 200 ? "ok" : response.body.error.code));
    expect(outcomes.sort()).toEqual(["TRANSACTION_ABORTED", "ok"]);
    const victimResponse = a.status === 200 ? b : a;
    expect(victimResponse.body.error).toMatchObject({ retryable: false, database: { engineCode: 1213 } });
    const victim = a.status === 200 ? second : first;
    const survivor = a.status === 200 ? first : second;
    // MySQL would run this in autocommit mode: it is refused without being sent.
    const later = await query("insert into log values ('after-deadlock')", { transactionId: victim });
    expect(later.body.error.code).toBe("TRANSACTION_ABORTED");
    const aborted = await gw.post(`/v1/transactions/${victim}/commit`, undefined);
    expect(aborted.status).toBe(409);
    expect(aborted.body.error.code).toBe("TRANSACTION_ABORTED");
    expect((await gw.post(`/v1/transactions/${survivor}/commit`, undefined)).body.outcome).toBe("committed");
    const rows = await db.query<{ id: number; n: number }>("select id, n from counter where id in (3, 4) order by id");
    // Only the survivor's updates are there (+1 on its own row, +10 on the other), none of the victim's.
    expect(rows.map((row) => Number(row.n)).sort((x, y) => x - y)).toEqual([1, 10]);
    expect(await countLog("after-deadlock")).toBe(0);
  });

  it("runs a string of several statements once: each commits on its own, so a conflict in a later one is an unknown outcome", async () => {
    const holder = await (await import("mysql2/promise")).createConnection({ uri: db.url });
    try {
      await holder.query("start transaction");
      await holder.query("select * from counter where id = 2 for update");
      const response = await query("insert into log values ('multi'); set session innodb_lock_wait_timeout = 1; update counter set n = n + 1 where id = 2");
      expect(response.body.error).toMatchObject({ code: "OUTCOME_UNKNOWN", attempts: 1 });
      expect(await countLog("multi")).toBe(1);
    } finally {
      await holder.query("rollback");
      await holder.end();
    }
  });

  it("treats a write refused by the caller's own READ ONLY transaction as an error, not a failover", async () => {
    const failoversBefore = ((await gw.get("/v1/admin/topology")).body.clusters.default.failovers as unknown[]).length;
    const response = await query("set session transaction read only; insert into log values ('read-only')");
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: "DATABASE_ERROR", attempts: 1, database: { engineCode: 1792 } });
    expect((await gw.get("/v1/admin/topology")).body.clusters.default.failovers).toHaveLength(failoversBefore);
    expect((await query("insert into log values ('writable-again')")).status).toBe(200);
  });

  it("never re-runs a statement whose connection died after it was sent: the outcome is unknown", async () => {
    const pending = query("insert into log select 'unknown' from (select sleep(3)) s");
    await killWhenRunning("'unknown' from (select sleep");
    const response = await pending;
    expect(response.status).toBe(502);
    expect(response.body.error).toMatchObject({ code: "OUTCOME_UNKNOWN", retryable: false, attempts: 1 });
    expect((await query("select 1 as ok")).status).toBe(200);
  });

  it("re-runs a batch whose connection died before COMMIT, applying it once", async () => {
    const pending = gw.post("/v1/batch", {
      statements: [
        { sql: "insert into log values ('once')" },
        { sql: "select sleep(if((select count(*) from log where tag = 'marker') = 0, 3, 0)) /* batch-sleep */" },
      ],
    });
    await killWhenRunning("batch-sleep");
    await db.query("insert into log values ('marker')");
    const response = await pending;
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.attempts).toBe(2);
    expect(await countLog("once")).toBe(1);
  });
});

describe("MySQL pool hygiene through the API", () => {
  it("evicts killed sessions and serves the next request on a new one", async () => {
    await query("select 1");
    const before = (await gw.get("/healthz")).body.clusters.default.pool.evicted as number;
    const killed = (await mysqlGatewaySessions(db)).map((s) => s.id);
    for (const id of killed) await db.admin.query(`KILL ${Number(id)}`);
    await waitFor(async () => (await gw.get("/healthz")).body.clusters.default.pool.evicted >= before + killed.length, 5000, "evictions");
    const response = await query("select connection_id() as id", { bigNumbers: "number" });
    expect(response.status).toBe(200);
    expect(killed).not.toContain(response.body.rows[0].id);
  });

  it("ends with every connection idle and no extra sessions after 1,000 failing requests of every kind", async () => {
    const failures: (() => Promise<{ status: number }>)[] = [
      () => query("selec 1"),
      () => query("select * from no_such_table"),
      () => query("insert into counter values (1, 0)"),
      () => query("select ? + ?", { params: [1] }),
      () => query(`select repeat('x', 1000) from ${mysqlSeries(20000)}`),
      () => gw.post("/v1/query", '{"sql": '),
      () => gw.post("/v1/query", { sql: "select 1", unknown: 1 }),
      () => gw.post("/v1/query", "select 1", { "content-type": "text/plain" }),
      () => query("select 1", { transactionId: "00000000-0000-0000-0000-000000000000" }),
      () => gw.post("/v1/batch", { statements: [{ sql: "insert into log values ('x')" }, { sql: "select * from no_such_table" }] }),
      () => query("set @x = 1; set time_zone = '+03:00'; select * from no_such_table"),
      () => query("begin; create temporary table t (x int); select * from no_such_table"),
      async () => {
        const begun = await gw.post("/v1/transactions", {});
        // Under load BEGIN itself may time out; without an id the insert below would autocommit.
        if (begun.status !== 201) return begun;
        await query("insert into log values ('x')", { transactionId: begun.body.transactionId });
        await query("select * from no_such_table", { transactionId: begun.body.transactionId });
        return gw.post(`/v1/transactions/${begun.body.transactionId}/rollback`, undefined).then(() => ({ status: 400 }));
      },
      async () => {
        const begun = await gw.post("/v1/transactions", {});
        if (begun.status !== 201) return begun;
        return query("select * from no_such_table", { transactionId: begun.body.transactionId }); // abandoned: expires
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
    const timeouts = Array.from({ length: 5 }, () => query("select sleep(5)", { timeoutMs: 50 }));
    await Promise.all([...workers, ...timeouts]);
    expect(failed).toBe(1000);

    await waitFor(
      async () => {
        const cluster = (await gw.get("/healthz")).body.clusters.default;
        return cluster.openTransactions === 0 && cluster.pool.active === 0 && cluster.pool.waiting === 0;
      },
      5000,
      "every connection idle",
    );
    const pool = (await gw.get("/healthz")).body.clusters.default.pool;
    expect(pool.total).toBeLessThanOrEqual(4);
    expect(pool.idle).toBe(pool.total);
    await waitFor(async () => (await mysqlGatewaySessions(db)).length === pool.total, 5000, "sessions closed");
    const sessions = await mysqlGatewaySessions(db);
    expect(sessions.every((s) => s.command === "Sleep")).toBe(true);
    const settings = await query("select @@session.time_zone as tz, @x as x");
    expect(settings.body.rows).toEqual([{ tz: "+00:00", x: null }]);
    expect(await countLog("x")).toBe(0);
  });
});
