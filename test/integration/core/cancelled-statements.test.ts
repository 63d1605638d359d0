/**
 * A statement the gateway cancelled at its deadline never passes on what the server answered
 * afterwards: MariaDB's KILL QUERY makes `DO SLEEP()` succeed and `BENCHMARK()` return 0 without an
 * error, and a PostgreSQL routine can catch the cancel and return as if nothing happened. A statement
 * the gateway knows only reads answers STATEMENT_TIMEOUT (it had no effect); one that may have applied
 * a change (a routine that caught the cancel may have gone on to write) answers OUTCOME_UNKNOWN, never
 * "no effect", which a caller would send again. On both engines and both surfaces (/v1/query and the
 * Data API's Execute); the session goes on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase } from "../../support/mysql.js";
import { createTestDatabase } from "../../support/postgres.js";

const ARNS = { resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:app", secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:app" };
const TIMEOUT_MS = 1000;

interface Target {
  name: string;
  /** Reads the server answers without an error once the gateway's cancel has stopped them. */
  readsAnsweredAfterCancel: string[];
  /** Statements that may write, answered without an error after the cancel. */
  mayApplyAnsweredAfterCancel: string[];
  setup(): Promise<{ url: string; cleanup(): Promise<void> }>;
}

const MYSQL: Target = {
  name: "MariaDB",
  readsAnsweredAfterCancel: ["do sleep(30)", "select benchmark(20000000000, md5('x')) b"],
  mayApplyAnsweredAfterCancel: [],
  async setup() {
    const db = await createTestMysqlDatabase();
    return { url: db.url, cleanup: () => db.drop() };
  },
};

const POSTGRES: Target = {
  name: "PostgreSQL",
  readsAnsweredAfterCancel: [],
  mayApplyAnsweredAfterCancel: [
    "select swallow_cancel() as b",
    "do $$ begin perform pg_sleep(30); exception when query_canceled then null; end $$",
    "select write_after_cancel() as b",
  ],
  async setup() {
    const db = await createTestDatabase();
    await db.admin.query(
      "create function swallow_cancel() returns int language plpgsql as $$ begin perform pg_sleep(30); return 1; exception when query_canceled then return 0; end $$",
    );
    // What "no effect" would hide: a routine that catches the cancel and then writes.
    await db.admin.query("create table marks (at timestamptz not null default now())");
    await db.admin.query(
      "create function write_after_cancel() returns int language plpgsql as $$ begin perform pg_sleep(30); return 1; exception when query_canceled then insert into marks default values; return 0; end $$",
    );
    return { url: db.url, cleanup: () => db.drop() };
  },
};

for (const target of [MYSQL, POSTGRES]) {
  describe(`a statement cancelled at its deadline on ${target.name}`, () => {
    let gateway: TestGateway;
    let env: Awaited<ReturnType<Target["setup"]>>;

    beforeAll(async () => {
      env = await target.setup();
      gateway = await startTestGateway({
        clusters: { default: { writerUrl: env.url } },
        pool: { maxSize: 1 },
        dataApi: { statementTimeoutMs: TIMEOUT_MS },
      });
    });

    afterAll(async () => {
      await gateway?.stop();
      await env?.cleanup();
    });

    for (const sql of target.readsAnsweredAfterCancel) {
      it(`answers STATEMENT_TIMEOUT on /v1/query for ${JSON.stringify(sql)}, not the interrupted result`, async () => {
        const answer = await gateway.post("/v1/query", { sql, timeoutMs: TIMEOUT_MS });
        expect(answer.status, JSON.stringify(answer.body)).toBe(504);
        expect(answer.body.error.code).toBe("STATEMENT_TIMEOUT");
        // The session goes on for the next request.
        expect((await gateway.post("/v1/query", { sql: "select 1 as x" })).body.rows).toEqual([{ x: 1 }]);
      });

      it(`answers StatementTimeoutException on the Data API for ${JSON.stringify(sql)}`, async () => {
        const answer = await gateway.post("/Execute", { ...ARNS, sql });
        expect(answer.headers.get("x-amzn-ErrorType"), JSON.stringify(answer.body)).toBe("StatementTimeoutException");
        expect(answer.status).toBe(400);
        expect((await gateway.post("/Execute", { ...ARNS, sql: "select 1 as x" })).status).toBe(200);
      });
    }

    for (const sql of target.mayApplyAnsweredAfterCancel) {
      it(`answers OUTCOME_UNKNOWN on /v1/query for ${JSON.stringify(sql)}, which may have written after the cancel`, async () => {
        const answer = await gateway.post("/v1/query", { sql, timeoutMs: TIMEOUT_MS });
        expect(answer.status, JSON.stringify(answer.body)).toBe(502);
        expect(answer.body.error).toMatchObject({ code: "OUTCOME_UNKNOWN", retryable: false });
        expect(answer.body.error.message).toContain("may have been applied");
        expect((await gateway.post("/v1/query", { sql: "select 1 as x" })).body.rows).toEqual([{ x: 1 }]);
      });

      it(`answers an error that is not StatementTimeoutException on the Data API for ${JSON.stringify(sql)}`, async () => {
        const answer = await gateway.post("/Execute", { ...ARNS, sql });
        expect(answer.headers.get("x-amzn-ErrorType"), JSON.stringify(answer.body)).toBe("DatabaseErrorException");
        expect(answer.body.message).toContain("may have been applied");
        expect((await gateway.post("/Execute", { ...ARNS, sql: "select 1 as x" })).status).toBe(200);
      });
    }

    if (target.mayApplyAnsweredAfterCancel.includes("select write_after_cancel() as b")) {
      it("was right not to say \"no effect\": the routine that caught the cancel wrote, once per call", async () => {
        const marks = await gateway.post("/v1/query", { sql: "select count(*)::int as n from marks" });
        expect(marks.body.rows).toEqual([{ n: 2 }]);
      });
    }

    it("answers a statement that ends in time as before", async () => {
      const answer = await gateway.post("/v1/query", { sql: "select 2 as x", timeoutMs: TIMEOUT_MS });
      expect(answer.status).toBe(200);
      expect(answer.body.rows).toEqual([{ x: 2 }]);
    });
  });
}
