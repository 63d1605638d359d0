/**
 * The core contract suite, run over HTTP against every backend the gateway supports (the real local
 * PostgreSQL and the embedded default): values, errors, batches, transactions, session isolation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayConfigInput } from "../../gateway/config/schema.js";
import { type HttpResult, startTestGateway, type TestGateway } from "../support/gateway.js";

export interface CoreTarget {
  name: string;
  /** Gateway config for this backend (clusters or embedded dataDir). */
  setup(): Promise<{ config: GatewayConfigInput; cleanup(): Promise<void> }>;
}

const SUITE_CONFIG: GatewayConfigInput = {
  // One connection, so consecutive requests share a session and leaks would show.
  pool: { maxSize: 1, acquireTimeoutMs: 5000 },
  limits: { maxResultBytes: 100000, maxResultRows: 1000 },
  server: { maxRequestBytes: 64 * 1024 },
  transactions: { idleTimeoutMs: 300, maxAgeMs: 60000 },
};

export function defineCoreSuite(target: CoreTarget): void {
  describe(`core contract on ${target.name}`, () => {
    let gw: TestGateway;
    let cleanup: () => Promise<void>;

    const query = (sql: string, params?: unknown[], extra: Record<string, unknown> = {}): Promise<HttpResult> =>
      gw.post("/v1/query", { sql, ...(params ? { params } : {}), ...extra });
    const one = async (sql: string, params?: unknown[], extra: Record<string, unknown> = {}) => {
      const response = await query(sql, params, extra);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body.rows[0];
    };

    beforeAll(async () => {
      const setup = await target.setup();
      cleanup = () => setup.cleanup();
      gw = await startTestGateway({ ...SUITE_CONFIG, ...setup.config });
      await query("CREATE TABLE items (id serial PRIMARY KEY, name text UNIQUE NOT NULL, qty int NOT NULL DEFAULT 0)");
    });

    afterAll(async () => {
      await gw?.stop();
      await cleanup?.();
    });

    it("returns columns with their types, rows and the row count", async () => {
      const response = await query("select 1 as one");
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        command: "SELECT",
        columns: [{ name: "one", type: "int4" }],
        rows: [{ one: 1 }],
        rowCount: 1,
        attempts: 1,
      });
      expect(response.headers.get("x-request-id")).toBeTruthy();
    });

    it("returns rows as arrays when asked", async () => {
      const response = await query("select 1 as a, 'x' as a", [], { rowMode: "array" });
      expect(response.body.rows).toEqual([[1, "x"]]);
      expect(response.body.columns.map((column: { name: string }) => column.name)).toEqual(["a", "a"]);
    });

    it("keeps int8 and numeric exact as strings, or returns numbers when asked", async () => {
      const row = await one("select $1::int8 as big, 12345678901234567890.123456789::numeric as dec", ["9007199254740993"]);
      expect(row).toEqual({ big: "9007199254740993", dec: "12345678901234567890.123456789" });
      const asNumbers = await one("select 42::int8 as big, 1.5::numeric as dec", [], { bigNumbers: "number" });
      expect(asNumbers).toEqual({ big: 42, dec: 1.5 });
    });

    it("converts timestamps to ISO-8601 and keeps date, time and interval text", async () => {
      const row = await one(
        "select '2024-02-03 04:05:06.789+00'::timestamptz as tz, '2024-02-03 04:05:06'::timestamp as ts, '2024-02-03'::date as d, '04:05:06'::time as t, '1 day 02:00:00'::interval as i",
      );
      expect(row).toEqual({
        tz: "2024-02-03T04:05:06.789Z",
        ts: "2024-02-03T04:05:06",
        d: "2024-02-03",
        t: "04:05:06",
        i: "1 day 02:00:00",
      });
    });

    it("round-trips bytea as base64, json, uuid, booleans, null, floats and arrays", async () => {
      const row = await one(
        "select $1::bytea as b, $2::jsonb as j, $3::uuid as u, true as yes, null::text as nothing, 'NaN'::float8 as nan, 2.5::float8 as f, $4::int[] as ints, array['a','b'] as texts, array[1::int8] as bigs, array['2024-01-01 00:00:00+00'::timestamptz] as times",
        [{ $bytea: Buffer.from("hello").toString("base64") }, { a: [1, "two"] }, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", [1, 2, 3]],
      );
      expect(row).toEqual({
        b: Buffer.from("hello").toString("base64"),
        j: { a: [1, "two"] },
        u: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        yes: true,
        nothing: null,
        nan: "NaN",
        f: 2.5,
        ints: [1, 2, 3],
        texts: ["a", "b"],
        bigs: ["1"],
        times: ["2024-01-01T00:00:00Z"],
      });
    });

    it("reports affected rows for writes and returns RETURNING rows", async () => {
      const inserted = await query("insert into items (name, qty) values ($1, $2), ($3, $4) returning id, name", ["apple", 1, "pear", 2]);
      expect(inserted.body).toMatchObject({ command: "INSERT", rowCount: 2 });
      expect(inserted.body.rows.map((row: { name: string }) => row.name)).toEqual(["apple", "pear"]);
      const updated = await query("update items set qty = qty + 1 where name in ('apple', 'pear')");
      expect(updated.body).toMatchObject({ command: "UPDATE", rowCount: 2, rows: [] });
    });

    it("runs several statements in one string and returns the last result, every time", async () => {
      for (let i = 0; i < 2; i++) {
        const response = await query(
          `create table if not exists multi (x int); insert into multi values (${i}); select count(*)::int as n from multi`,
        );
        expect(response.status).toBe(200);
        expect(response.body.rows).toEqual([{ n: i + 1 }]);
      }
    });

    it("runs a several-statement string inside a transaction on first sight", async () => {
      const id = (await gw.post("/v1/transactions", {})).body.transactionId;
      const response = await query("insert into items (name) values ('multi-tx-1'); insert into items (name) values ('multi-tx-2')", [], { transactionId: id });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect((await gw.post(`/v1/transactions/${id}/commit`, undefined)).body.outcome).toBe("committed");
      expect((await one("select count(*)::int as n from items where name like 'multi-tx-%'")).n).toBe(2);
    });

    it("keeps serving a cached statement after the table's columns change", async () => {
      await query("create table reshaped (id int primary key)");
      await query("insert into reshaped values (1)");
      const sql = "select * from reshaped where id = $1";
      expect((await query(sql, [1])).body.rows).toEqual([{ id: 1 }]);
      await query("alter table reshaped add column note text default 'new'");
      const after = await query(sql, [1]);
      expect(after.status, JSON.stringify(after.body)).toBe(200);
      expect(after.body.rows).toEqual([{ id: 1, note: "new" }]);
    });

    it("names types that are not built in, such as enums", async () => {
      await query("create type mood as enum ('ok', 'sad')");
      const response = await query("select 'sad'::mood as m, array['ok'::mood] as ms");
      expect(response.body.columns).toEqual([
        { name: "m", type: "mood" },
        { name: "ms", type: "_mood" },
      ]);
      expect(response.body.rows).toEqual([{ m: "sad", ms: ["ok"] }]);
      const again = await query("select array['ok'::mood, 'sad'::mood] as ms");
      expect(again.body.rows).toEqual([{ ms: ["ok", "sad"] }]);
    });

    it("keeps the database's error fields: SQLSTATE, detail, constraint, position", async () => {
      await query("insert into items (name) values ('dup')");
      const duplicate = await query("insert into items (name) values ('dup')");
      expect(duplicate.status).toBe(400);
      expect(duplicate.body.error).toMatchObject({
        code: "DATABASE_ERROR",
        retryable: false,
        database: { sqlstate: "23505", constraint: "items_name_key", detail: expect.stringContaining("dup") },
      });
      const syntax = await query("selec 1");
      expect(syntax.body.error.database).toMatchObject({ sqlstate: "42601", position: 1 });
    });

    it("rejects invalid requests with a clear error and stays healthy", async () => {
      const unknownField = await gw.post("/v1/query", { sql: "select 1", nope: true });
      expect(unknownField.status).toBe(400);
      expect(unknownField.body.error.code).toBe("INVALID_REQUEST");
      expect(unknownField.body.error.message).toContain("nope");
      const wrongType = await gw.post("/v1/query", { sql: 5 });
      expect(wrongType.body.error).toMatchObject({ code: "INVALID_REQUEST", issues: [{ path: "sql" }] });
      const poisoned = await gw.post("/v1/query", '{"sql": "select 1", "__proto__": {"polluted": true}}');
      expect(poisoned.body.error.code).toBe("INVALID_REQUEST");
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const malformed = await gw.post("/v1/query", '{"sql": "select 1"');
      expect(malformed.status).toBe(400);
      expect(malformed.body.error.code).toBe("MALFORMED_JSON");
      const notJson = await gw.post("/v1/query", "select 1", { "content-type": "text/plain" });
      expect(notJson.status).toBe(415);
      expect(notJson.body.error.code).toBe("UNSUPPORTED_MEDIA_TYPE");
      const huge = await gw.post("/v1/query", { sql: `select '${"x".repeat(70 * 1024)}'` });
      expect(huge.status).toBe(413);
      expect(huge.body.error.code).toBe("REQUEST_TOO_LARGE");
      const missing = await gw.get("/v1/nothing");
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe("ROUTE_NOT_FOUND");
      const cluster = await query("select 1", [], { cluster: "elsewhere" });
      expect(cluster.body.error.code).toBe("INVALID_REQUEST");
      const timeout = await query("select 1", [], { timeoutMs: 10_000_000 });
      expect(timeout.body.error.code).toBe("INVALID_REQUEST");
      expect((await query("select 2 as two")).body.rows).toEqual([{ two: 2 }]);
    });

    it("refuses results over the size limits without returning a partial result", async () => {
      const wide = await query("select repeat('x', 1000) from generate_series(1, 500)");
      expect(wide.status).toBe(413);
      expect(wide.body.error.code).toBe("RESULT_TOO_LARGE");
      const long = await query("select g from generate_series(1, 5000) g");
      expect(long.body.error.code).toBe("RESULT_TOO_LARGE");
      expect((await query("select 3 as three")).body.rows).toEqual([{ three: 3 }]);
    });

    it("runs a batch atomically: all statements or none", async () => {
      const ok = await gw.post("/v1/batch", {
        statements: [
          { sql: "insert into items (name) values ($1)", params: ["batch-a"] },
          { sql: "select count(*)::int as n from items where name = 'batch-a'" },
        ],
      });
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ attempts: 1, results: [{ rowCount: 1 }, { rows: [{ n: 1 }] }] });
      const failed = await gw.post("/v1/batch", {
        statements: [{ sql: "insert into items (name) values ('batch-b')" }, { sql: "insert into items (name) values ('batch-a')" }],
      });
      expect(failed.status).toBe(400);
      expect(failed.body.error.database.sqlstate).toBe("23505");
      expect((await one("select count(*)::int as n from items where name = 'batch-b'")).n).toBe(0);
    });

    it("commits and rolls back interactive transactions pinned to one connection", async () => {
      const begun = await gw.post("/v1/transactions", {});
      expect(begun.status).toBe(201);
      const id = begun.body.transactionId;
      await query("insert into items (name) values ('tx-commit')", [], { transactionId: id });
      const inside = await query("select count(*)::int as n from items where name = 'tx-commit'", [], { transactionId: id });
      expect(inside.body.rows).toEqual([{ n: 1 }]);
      const committed = await gw.post(`/v1/transactions/${id}/commit`, undefined);
      expect(committed.body).toMatchObject({ transactionId: id, outcome: "committed" });
      expect((await one("select count(*)::int as n from items where name = 'tx-commit'")).n).toBe(1);

      const second = (await gw.post("/v1/transactions", {})).body.transactionId;
      await query("insert into items (name) values ('tx-rollback')", [], { transactionId: second });
      expect((await gw.post(`/v1/transactions/${second}/rollback`, undefined)).body.outcome).toBe("rolled back");
      expect((await one("select count(*)::int as n from items where name = 'tx-rollback'")).n).toBe(0);
      const again = await gw.post(`/v1/transactions/${second}/commit`, undefined);
      expect(again.status).toBe(404);
      expect(again.body.error.code).toBe("TRANSACTION_NOT_FOUND");
    });

    it("reports a failed transaction's COMMIT as aborted", async () => {
      const id = (await gw.post("/v1/transactions", { isolation: "serializable" })).body.transactionId;
      const failed = await query("select 1/0", [], { transactionId: id });
      expect(failed.body.error.database.sqlstate).toBe("22012");
      const commit = await gw.post(`/v1/transactions/${id}/commit`, undefined);
      expect(commit.status).toBe(409);
      expect(commit.body.error.code).toBe("TRANSACTION_ABORTED");
    });

    it("rolls back a transaction left idle and says it expired", async () => {
      const id = (await gw.post("/v1/transactions", {})).body.transactionId;
      await query("insert into items (name) values ('tx-idle')", [], { transactionId: id });
      let late: HttpResult | undefined;
      for (let i = 0; i < 100 && late?.status !== 404; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        if (i > 10) late = await query("select 1", [], { transactionId: id });
      }
      expect(late?.body.error.code).toBe("TRANSACTION_EXPIRED");
      expect((await one("select count(*)::int as n from items where name = 'tx-idle'")).n).toBe(0);
      const unknown = await query("select 1", [], { transactionId: "no-such-transaction" });
      expect(unknown.body.error.code).toBe("TRANSACTION_NOT_FOUND");
    });

    it("does not leak session state between callers", async () => {
      const before = (await one("select current_setting('search_path') as path")).path;
      await query("set search_path to nowhere");
      expect((await one("select current_setting('search_path') as path")).path).toBe(before);
      await query("create temp table scratch (x int)");
      expect((await one("select count(*)::int as n from pg_class where relname = 'scratch'")).n).toBe(0);
      await query("prepare leaked as select 1");
      expect((await one("select count(*)::int as n from pg_prepared_statements where name = 'leaked'")).n).toBe(0);
      await query("select pg_advisory_lock(42)");
      expect((await one("select count(*)::int as n from pg_locks where locktype = 'advisory'")).n).toBe(0);
      // A BEGIN left open would swallow the insert, and the ROLLBACK after it would undo it.
      await query("begin");
      await query("insert into items (name) values ('after-leaked-begin')");
      await query("rollback");
      expect((await one("select count(*)::int as n from items where name = 'after-leaked-begin'")).n).toBe(1);
    });

    it("serves its OpenAPI document and health endpoints", async () => {
      const openApi = await gw.get("/openapi.json");
      expect(Object.keys(openApi.body.paths)).toEqual(expect.arrayContaining(["/v1/query", "/v1/batch", "/v1/transactions"]));
      const health = await gw.get("/healthz");
      expect(health.body).toMatchObject({ status: "ok", clusters: { default: { database: { status: "up" } } } });
      expect((await gw.get("/readyz")).body).toEqual({ ready: true });
    });
  });
}
