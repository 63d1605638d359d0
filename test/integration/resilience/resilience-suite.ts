/**
 * The resilience suite, written once and run through the HTTP API on each engine's real local server:
 * timeouts that stop the statement on the server (PostgreSQL CancelRequest, MySQL KILL QUERY),
 * conflicts retried as a whole, no retry when the outcome is unknown, a batch re-run when its session
 * died before COMMIT, the caller's own read-only refusal (not a failover), eviction of killed
 * sessions, and a pool that ends clean after a thousand failing requests.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { waitFor } from "../../support/wait-for.js";

/** A session the gateway holds on the test database, as the server lists it. */
export interface ServerSession {
  id: number;
  /** The statement it runs now (MySQL), or ran last (PostgreSQL); null when none. */
  statement: string | null;
  /** Running a statement now. */
  busy: boolean;
}

export type Query = (sql: string, extra?: Record<string, unknown>) => ReturnType<TestGateway["post"]>;

/** One engine's server, database and SQL for the suite. */
export interface ResilienceHarness {
  url: string;
  /** Runs SQL as an administrator on the test database. */
  admin(sql: string): Promise<void>;
  /** How many rows of `log` carry `tag`. */
  countLog(tag: string): Promise<number>;
  /** The value of counter row `id`. */
  counter(id: number): Promise<number>;
  sessions(): Promise<ServerSession[]>;
  /** Ends (as an administrator) the gateway sessions running a statement that contains `pattern`, or all. */
  kill(pattern?: string): Promise<void>;
  drop(): Promise<void>;
}

export interface ResilienceTarget {
  name: string;
  /** Creates the database with `counter (id, n)` holding rows 1 and 2 at 0, and `log (tag)`. */
  setup(): Promise<ResilienceHarness>;
  sql: {
    /** A statement that sleeps `seconds`. */
    sleep(seconds: number): string;
    /** Inserts 'unknown' into log after sleeping 3 s, in one statement; `marker` is in its text. */
    slowInsert: { sql: string; marker: string };
    /** Sleeps 3 s unless log holds a 'marker' row, carrying the text `batch-sleep`. */
    sleepUntilMarker: string;
    /** A write refused by the session's own READ ONLY setting, and the database fields of the refusal. */
    readOnlyWrite: { sql: string; database: Record<string, unknown> };
    /** Answers this session's id as `id`. */
    sessionId: string;
    /** A statement that fails on the server and leaves the session as it was. */
    fail: string;
    /** A result larger than the gateway's limits. */
    bigResult: string;
    /** Statements that change the session's settings and variables. */
    sessionChanges: string;
    /** Creates a temporary table `t`. */
    createTemp: string;
  };
  /** The engine's own ways to fail (parameters, a transaction ended after a failure), added to the thousand. */
  failures(query: Query, gw: TestGateway): (() => Promise<{ status: number }>)[];
  /** After the thousand: SQL and the rows it answers on a session nothing was left on. */
  cleanSession: { sql: string; rows: Record<string, unknown>[] };
  /** Cases for this engine alone, on the same gateway and database. */
  engineCases?(context: () => { gw: TestGateway; db: ResilienceHarness; query: Query }): void;
}

export function defineResilienceSuite(target: ResilienceTarget): void {
  const { sql } = target;

  describe(`resilience on ${target.name}`, () => {
    let db: ResilienceHarness;
    let gw: TestGateway;

    const query: Query = (text, extra = {}) => gw.post("/v1/query", { sql: text, ...extra });

    /** Kills the gateway's sessions that are running a statement matching `pattern`, once it runs. */
    async function killWhenRunning(pattern: string): Promise<void> {
      await waitFor(async () => (await db.sessions()).some((s) => s.busy && s.statement?.includes(pattern)), 5000, pattern);
      await db.kill(pattern);
    }

    beforeAll(async () => {
      db = await target.setup();
      gw = await startTestGateway({
        clusters: { default: { writerUrl: db.url } },
        pool: { maxSize: 4, acquireTimeoutMs: 3000 },
        transactions: { idleTimeoutMs: 200 },
        retry: { maxAttempts: 30, baseDelayMs: 5, maxDelayMs: 100, maxTotalMs: 20000 },
      });
    });

    afterAll(async () => {
      await gw?.stop();
      await db?.drop();
    });

    describe("timeouts and retries", () => {
      it("stops a statement on the server when its timeout expires, and keeps the session", async () => {
        // The pool opens its four sessions at start-up: the snapshot waits until they are all there and idle.
        await waitFor(async () => {
          const pool = (await gw.get("/healthz")).body.clusters.default.pool;
          const sessions = await db.sessions();
          return pool.total === 4 && pool.idle === 4 && sessions.length === 4 && sessions.every((s) => !s.busy);
        }, 10000, "the pool's four sessions, idle");
        const before = (await db.sessions()).map((s) => s.id);
        // A 30 s statement answered 504: the deadline cut it (how soon is the bench's to measure).
        const response = await query(`${sql.sleep(30)} /* cancel-me */`, { timeoutMs: 200 });
        expect(response.status).toBe(504);
        expect(response.body.error).toMatchObject({ code: "STATEMENT_TIMEOUT", retryable: false });
        const running = (await db.sessions()).filter((s) => s.busy && s.statement?.includes("cancel-me"));
        expect(running).toEqual([]);
        expect((await query("select 1 as ok")).body.rows).toEqual([{ ok: 1 }]);
        // The session the statement ran on survived: no new session was needed.
        expect((await db.sessions()).map((s) => s.id)).toEqual(before);
      });

      it("ten concurrent serializable increments all land exactly once through automatic retries", async () => {
        const increment = () =>
          gw.post("/v1/batch", {
            isolation: "serializable",
            statements: [{ sql: "select n from counter where id = 1" }, { sql: sql.sleep(0.02) }, { sql: "update counter set n = n + 1 where id = 1" }],
          });
        const responses = await Promise.all(Array.from({ length: 10 }, increment));
        expect(responses.map((r) => r.status)).toEqual(new Array(10).fill(200));
        expect(await db.counter(1)).toBe(10);
        const attempts = responses.map((r) => r.body.attempts as number);
        expect(Math.max(...attempts)).toBeGreaterThan(1);
      });

      it("never re-runs a statement whose connection died after it was sent: the outcome is unknown", async () => {
        const pending = query(sql.slowInsert.sql);
        await killWhenRunning(sql.slowInsert.marker);
        const response = await pending;
        expect(response.status).toBe(502);
        expect(response.body.error).toMatchObject({ code: "OUTCOME_UNKNOWN", retryable: false, attempts: 1 });
        expect((await query("select 1 as ok")).status).toBe(200);
      });

      it("re-runs a batch whose connection died before COMMIT, applying it once", async () => {
        const pending = gw.post("/v1/batch", { statements: [{ sql: "insert into log values ('once')" }, { sql: sql.sleepUntilMarker }] });
        await killWhenRunning("batch-sleep");
        await db.admin("insert into log values ('marker')");
        const response = await pending;
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        expect(response.body.attempts).toBe(2);
        expect(await db.countLog("once")).toBe(1);
      });
    });

    describe("read-only refusals", () => {
      it("treats a write refused by the caller's own READ ONLY setting as an error, not a failover", async () => {
        const failoversBefore = ((await gw.get("/v1/admin/topology")).body.clusters.default.failovers as unknown[]).length;
        const response = await query(sql.readOnlyWrite.sql);
        expect(response.status).toBe(400);
        expect(response.body.error).toMatchObject({ code: "DATABASE_ERROR", attempts: 1, database: sql.readOnlyWrite.database });
        expect((await gw.get("/v1/admin/topology")).body.clusters.default.failovers).toHaveLength(failoversBefore);
        expect((await query("insert into log values ('writable-again')")).status).toBe(200);
      });
    });

    describe("pool hygiene through the API", () => {
      it("evicts killed sessions and serves the next request on a new one", async () => {
        await query("select 1");
        const before = (await gw.get("/healthz")).body.clusters.default.pool.evicted as number;
        const killed = (await db.sessions()).map((s) => s.id);
        await db.kill();
        await waitFor(async () => (await gw.get("/healthz")).body.clusters.default.pool.evicted >= before + killed.length, 5000, "evictions");
        const response = await query(sql.sessionId, { bigNumbers: "number" });
        expect(response.status).toBe(200);
        expect(killed).not.toContain(response.body.rows[0].id);
      });

      it("ends with every connection idle and no extra sessions after 1,000 failing requests of every kind", async () => {
        const failures: (() => Promise<{ status: number }>)[] = [
          () => query("selec 1"),
          () => query("insert into counter values (1, 0)"),
          () => gw.post("/v1/query", '{"sql": '),
          () => gw.post("/v1/query", { sql: "select 1", unknown: 1 }),
          () => gw.post("/v1/query", "select 1", { "content-type": "text/plain" }),
          () => query("select 1", { transactionId: "00000000-0000-0000-0000-000000000000" }),
          () => query(sql.fail),
          () => query(sql.bigResult),
          () => gw.post("/v1/batch", { statements: [{ sql: "insert into log values ('x')" }, { sql: sql.fail }] }),
          () => query(`${sql.sessionChanges}; ${sql.fail}`),
          () => query(`begin; ${sql.createTemp}; ${sql.fail}`),
          async () => {
            const begun = await gw.post("/v1/transactions", {});
            // Under load BEGIN itself may time out; without an id the statement below would run on its own.
            if (begun.status !== 201) return begun;
            return query(sql.fail, { transactionId: begun.body.transactionId }); // abandoned: expires
          },
          ...target.failures(query, gw),
        ];
        let failed = 0;
        const workers = Array.from({ length: 8 }, async (_, worker) => {
          for (let i = worker; i < 1000; i += 8) {
            const failure = failures[i % failures.length] as () => Promise<{ status: number }>;
            if ((await failure()).status >= 400) failed++;
          }
        });
        // A few statement timeouts among them.
        const timeouts = Array.from({ length: 5 }, () => query(sql.sleep(5), { timeoutMs: 50 }));
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
        await waitFor(async () => (await db.sessions()).length === pool.total, 5000, "sessions closed");
        const sessions = await db.sessions();
        expect(sessions.every((s) => !s.busy)).toBe(true);
        const settings = await query(target.cleanSession.sql);
        expect(settings.body.rows).toEqual(target.cleanSession.rows);
        expect(await db.countLog("x")).toBe(0);
        // A hang guard, not a timing assertion: a thousand requests take long on a loaded machine.
      }, 120_000);
    });

    target.engineCases?.(() => ({ gw, db, query }));
  });
}
