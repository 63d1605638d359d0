/**
 * The core contract suite, run over HTTP against every backend the gateway supports (the real local
 * PostgreSQL, the embedded default and the real local MariaDB through the MySQL engine): values,
 * errors, batches, transactions, session isolation. The few differences between the dialects
 * (placeholders, type names, error codes, how to make N rows) come from the target's `Dialect`; the
 * value conversions each engine owns are tested in the block for that engine.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayConfigInput } from "../../../gateway/config/schema.js";
import { type HttpResult, openTransactions, startTestGateway, type TestGateway } from "../../support/gateway.js";
import { waitFor } from "../../support/wait-for.js";

/** What differs between the engines' SQL, and nothing else. */
export interface Dialect {
  engine: "postgres" | "mysql";
  /** The n-th (1-based) parameter placeholder. */
  p(n: number): string;
  /** Type name of the literal 1. */
  intType: string;
  /** A FROM item producing rows 1..n in a column named g. */
  series(n: number): string;
  /** A statement that fails with division by zero. */
  divisionByZero: string;
  duplicate: { sqlstate: string; engineCode?: number; constraint: string };
  syntax: { sqlstate: string; engineCode?: number };
}

export const POSTGRES_DIALECT: Dialect = {
  engine: "postgres",
  p: (n) => `$${n}`,
  intType: "int4",
  series: (n) => `generate_series(1, ${n}) g`,
  divisionByZero: "select 1/0",
  duplicate: { sqlstate: "23505", constraint: "items_name_key" },
  syntax: { sqlstate: "42601" },
};

/** Rows 1..n (n < 100,000) from cross-joined digits: recursive CTEs stop silently at max_recursive_iterations. */
export function mysqlSeries(n: number): string {
  const digits = "(select 0 d union all select 1 union all select 2 union all select 3 union all select 4 union all select 5 union all select 6 union all select 7 union all select 8 union all select 9)";
  return `(select d1.d + 10 * d2.d + 100 * d3.d + 1000 * d4.d + 10000 * d5.d + 1 as g from ${digits} d1, ${digits} d2, ${digits} d3, ${digits} d4, ${digits} d5 where d1.d + 10 * d2.d + 100 * d3.d + 1000 * d4.d + 10000 * d5.d < ${n}) g`;
}

export const MYSQL_DIALECT: Dialect = {
  engine: "mysql",
  p: () => "?",
  intType: "int",
  series: mysqlSeries,
  // Division by zero is NULL in MySQL unless the statement writes in strict mode.
  divisionByZero: "select * from no_such_table_for_errors",
  duplicate: { sqlstate: "23000", engineCode: 1062, constraint: "name" },
  syntax: { sqlstate: "42000", engineCode: 1064 },
};

export interface CoreTarget {
  name: string;
  dialect: Dialect;
  /** Gateway config for this backend (clusters or embedded dataDir). */
  setup(): Promise<{ config: GatewayConfigInput; cleanup(): Promise<void> }>;
  /** What `select version()` answers on this backend, and what it must not contain. */
  version?: { matches: RegExp; notContaining?: string };
}

/** A backend that is a database of its own on a local server, dropped afterwards. */
export function onLocalServer(create: () => Promise<{ url: string; drop(): Promise<void> }>): CoreTarget["setup"] {
  return async () => {
    const db = await create();
    return { config: { clusters: { default: { writerUrl: db.url } } }, cleanup: () => db.drop() };
  };
}

const SUITE_CONFIG: GatewayConfigInput = {
  // One connection, so consecutive requests share a session and leaks would show.
  pool: { maxSize: 1, acquireTimeoutMs: 5000 },
  limits: { maxResultBytes: 100000, maxResultRows: 1000 },
  server: { maxRequestBytes: 64 * 1024 },
  transactions: { idleTimeoutMs: 300, maxAgeMs: 60000 },
};

export function defineCoreSuite(target: CoreTarget): void {
  const d = target.dialect;
  const pg = d.engine === "postgres";
  /** count(*) as a JSON number on both engines. */
  const count = (where: string) => `select count(*) as n from items where ${where}`;

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
    const countOf = async (where: string) => (await one(count(where), [], { bigNumbers: "number" })).n as number;

    beforeAll(async () => {
      const setup = await target.setup();
      cleanup = () => setup.cleanup();
      gw = await startTestGateway({ ...SUITE_CONFIG, ...setup.config });
      const created = await query(
        pg
          ? "CREATE TABLE items (id serial PRIMARY KEY, name text UNIQUE NOT NULL, qty int NOT NULL DEFAULT 0)"
          : "CREATE TABLE items (id int AUTO_INCREMENT PRIMARY KEY, name varchar(100) NOT NULL, qty int NOT NULL DEFAULT 0, CONSTRAINT name UNIQUE (name)) ENGINE=InnoDB",
      );
      expect(created.status, JSON.stringify(created.body)).toBe(200);
    });

    afterAll(async () => {
      await gw?.stop();
      await cleanup?.();
    });

    if (target.version) {
      const { matches, notContaining } = target.version;
      it("runs on the server it names", async () => {
        const { v } = await one("select version() as v");
        expect(v).toMatch(matches);
        if (notContaining !== undefined) expect(v).not.toContain(notContaining);
      });
    }

    it("returns columns with their types, rows and the row count", async () => {
      const response = await query("select 1 as one");
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        command: "SELECT",
        columns: [{ name: "one", type: d.intType }],
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

    if (pg) {
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
    } else {
      it("keeps BIGINT and DECIMAL exact as strings, or returns numbers when asked", async () => {
        const row = await one("select cast(? as signed) as big, cast('12345678901234567890.123456789' as decimal(30,9)) as exact, cast(18446744073709551615 as unsigned) as u", [
          "9007199254740993",
        ]);
        expect(row).toEqual({ big: "9007199254740993", exact: "12345678901234567890.123456789", u: "18446744073709551615" });
        const asNumbers = await one("select cast(42 as signed) as big, cast(1.5 as decimal(4,1)) as exact", [], { bigNumbers: "number" });
        expect(asNumbers).toEqual({ big: 42, exact: 1.5 });
      });

      it("converts DATETIME and TIMESTAMP to ISO-8601 and keeps DATE and TIME text", async () => {
        await query(
          "create table times (dt datetime(3), ts timestamp(3) null, d date, t time, y year)",
        );
        await query("insert into times values (?, ?, ?, ?, ?)", ["2024-02-03 04:05:06.789", "2024-02-03 04:05:06.789", "2024-02-03", "04:05:06", 2024]);
        const response = await query("select * from times");
        expect(response.body.columns.map((column: { type: string }) => column.type)).toEqual(["datetime", "timestamp", "date", "time", "year"]);
        expect(response.body.rows).toEqual([{ dt: "2024-02-03T04:05:06.789", ts: "2024-02-03T04:05:06.789Z", d: "2024-02-03", t: "04:05:06", y: 2024 }]);
        await query("create table clocks (t time(3))");
        await query("insert into clocks values ('-12:34:56.5')");
        // TIME keeps its declared fraction digits through both protocols.
        expect((await query("select t from clocks")).body.rows).toEqual([{ t: "-12:34:56.500" }]);
        expect((await query("select t from clocks where t < ?", ["00:00:00"])).body.rows).toEqual([{ t: "-12:34:56.500" }]);
        // The same values through the text protocol (no parameters).
        expect((await query("select dt, ts from times where y = 2024")).body.rows).toEqual([{ dt: "2024-02-03T04:05:06.789", ts: "2024-02-03T04:05:06.789Z" }]);
      });

      it("round-trips BLOB and BINARY as base64, JSON, BIT, ENUM, SET, floats, booleans and NULL", async () => {
        await query(
          "create table kinds (b blob, vb varbinary(8), j json, bits bit(5), e enum('ok','sad'), s set('x','y','z'), f float, db double, flag boolean, note text, nothing int)",
        );
        const hello = Buffer.from("hello").toString("base64");
        const inserted = await query("insert into kinds values (?, ?, ?, b'00101', ?, ?, ?, ?, ?, ?, ?)", [
          { $bytea: hello },
          { $bytea: "AAH/" },
          { a: [1, "two"] },
          "sad",
          "x,z",
          0.1,
          2.5,
          true,
          "héllo ✓",
          null,
        ]);
        expect(inserted.status, JSON.stringify(inserted.body)).toBe(200);
        const expected = { b: hello, vb: "AAH/", j: { a: [1, "two"] }, bits: "00101", e: "sad", s: "x,z", f: 0.1, db: 2.5, flag: 1, note: "héllo ✓", nothing: null };
        const text = await query("select * from kinds");
        expect(text.body.rows).toEqual([expected]);
        expect(text.body.columns.map((column: { type: string }) => column.type)).toEqual([
          "blob", "varbinary", "json", "bit", "enum", "set", "float", "double", "tinyint", "text", "int",
        ]);
        // The binary protocol (a prepared statement) gives the same JSON.
        expect((await query("select * from kinds where e = ?", ["sad"])).body.rows).toEqual([expected]);
        expect(await one("select json_object('k', ?) as j, ? as arr", [5, [1, 2]])).toEqual({ j: { k: 5 }, arr: "[1,2]" });
      });

      it("reports affected rows and the generated id for writes", async () => {
        const inserted = await query("insert into items (name, qty) values (?, ?), (?, ?)", ["apple", 1, "pear", 2]);
        expect(inserted.body).toMatchObject({ command: "INSERT", rowCount: 2, rows: [], columns: [] });
        const first = Number(inserted.body.lastInsertId);
        expect(first).toBeGreaterThan(0);
        const one = await query("insert into items (name) values ('plum')");
        expect(Number(one.body.lastInsertId)).toBe(first + 2);
        const updated = await query("update items set qty = qty + 1 where name in ('apple', 'pear')");
        expect(updated.body).toMatchObject({ command: "UPDATE", rowCount: 2, rows: [] });
        expect(updated.body.lastInsertId).toBeUndefined();
      });

      it("binds integers exactly, also where MySQL insists on an integer (LIMIT ?)", async () => {
        expect((await query("select g from (select 1 as g union all select 2 union all select 3) t order by g limit ?", [2])).body.rows).toEqual([{ g: 1 }, { g: 2 }]);
        expect(await one("select ? as big", ["9007199254740993"])).toEqual({ big: "9007199254740993" });
      });
    }

    it("runs several statements in one string and returns the last result, every time", async () => {
      for (let i = 0; i < 2; i++) {
        const response = await query(
          pg
            ? `create table if not exists multi (x int); insert into multi values (${i}); select count(*)::int as n from multi`
            : `create table if not exists multi (x int); insert into multi values (${i}); select count(*) + 0 as n from multi`,
        );
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        expect(Number(response.body.rows[0].n)).toBe(i + 1);
      }
    });

    it("runs a several-statement string inside a transaction on first sight", async () => {
      const id = (await gw.post("/v1/transactions", {})).body.transactionId;
      const response = await query("insert into items (name) values ('multi-tx-1'); insert into items (name) values ('multi-tx-2')", [], { transactionId: id });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect((await gw.post(`/v1/transactions/${id}/commit`, undefined)).body.outcome).toBe("committed");
      expect(await countOf("name like 'multi-tx-%'")).toBe(2);
    });

    it("keeps serving a cached statement after the table's columns change", async () => {
      await query("create table reshaped (id int primary key)");
      await query("insert into reshaped values (1)");
      const sql = `select * from reshaped where id = ${d.p(1)}`;
      expect((await query(sql, [1])).body.rows).toEqual([{ id: 1 }]);
      await query(pg ? "alter table reshaped add column note text default 'new'" : "alter table reshaped add column note varchar(10) default 'new'");
      const after = await query(sql, [1]);
      expect(after.status, JSON.stringify(after.body)).toBe(200);
      expect(after.body.rows).toEqual([{ id: 1, note: "new" }]);
    });

    it("keeps the database's error fields: SQLSTATE, engine code, constraint", async () => {
      await query("insert into items (name) values ('dup')");
      const duplicate = await query("insert into items (name) values ('dup')");
      expect(duplicate.status).toBe(400);
      expect(duplicate.body.error).toMatchObject({
        code: "DATABASE_ERROR",
        retryable: false,
        database: { sqlstate: d.duplicate.sqlstate, constraint: d.duplicate.constraint, ...(d.duplicate.engineCode ? { engineCode: d.duplicate.engineCode } : {}) },
      });
      expect(pg ? duplicate.body.error.database.detail : duplicate.body.error.database.message).toContain("dup");
      const syntax = await query("selec 1");
      expect(syntax.body.error.database).toMatchObject({ sqlstate: d.syntax.sqlstate, ...(pg ? { position: 1 } : { engineCode: d.syntax.engineCode }) });
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
      const wide = await query(`select repeat('x', 1000) as x from ${d.series(500)}`);
      expect(wide.status, JSON.stringify(wide.body).slice(0, 300)).toBe(413);
      expect(wide.body.error.code).toBe("RESULT_TOO_LARGE");
      const long = await query(`select g from ${d.series(5000)}`);
      expect(long.body.error.code).toBe("RESULT_TOO_LARGE");
      expect((await query("select 3 as three")).body.rows).toEqual([{ three: 3 }]);
    });

    it("runs a batch atomically: all statements or none", async () => {
      const ok = await gw.post("/v1/batch", {
        statements: [
          { sql: `insert into items (name) values (${d.p(1)})`, params: ["batch-a"] },
          { sql: count("name = 'batch-a'") },
        ],
        bigNumbers: "number",
      });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.body).toMatchObject({ attempts: 1, results: [{ rowCount: 1 }, { rows: [{ n: 1 }] }] });
      const failed = await gw.post("/v1/batch", {
        statements: [{ sql: "insert into items (name) values ('batch-b')" }, { sql: "insert into items (name) values ('batch-a')" }],
      });
      expect(failed.status).toBe(400);
      expect(failed.body.error.database.sqlstate).toBe(d.duplicate.sqlstate);
      expect(await countOf("name = 'batch-b'")).toBe(0);
    });

    it("commits and rolls back interactive transactions pinned to one connection", async () => {
      const begun = await gw.post("/v1/transactions", {});
      expect(begun.status).toBe(201);
      const id = begun.body.transactionId;
      await query("insert into items (name) values ('tx-commit')", [], { transactionId: id });
      const inside = await query(count("name = 'tx-commit'"), [], { transactionId: id, bigNumbers: "number" });
      expect(inside.body.rows).toEqual([{ n: 1 }]);
      const committed = await gw.post(`/v1/transactions/${id}/commit`, undefined);
      expect(committed.body).toMatchObject({ transactionId: id, outcome: "committed" });
      expect(await countOf("name = 'tx-commit'")).toBe(1);

      const second = (await gw.post("/v1/transactions", {})).body.transactionId;
      await query("insert into items (name) values ('tx-rollback')", [], { transactionId: second });
      expect((await gw.post(`/v1/transactions/${second}/rollback`, undefined)).body.outcome).toBe("rolled back");
      expect(await countOf("name = 'tx-rollback'")).toBe(0);
      const again = await gw.post(`/v1/transactions/${second}/commit`, undefined);
      expect(again.status).toBe(404);
      expect(again.body.error.code).toBe("TRANSACTION_NOT_FOUND");
    });

    if (pg) {
      it("reports a failed transaction's COMMIT as aborted", async () => {
        const id = (await gw.post("/v1/transactions", { isolation: "serializable" })).body.transactionId;
        const failed = await query("select 1/0", [], { transactionId: id });
        expect(failed.body.error.database.sqlstate).toBe("22012");
        const commit = await gw.post(`/v1/transactions/${id}/commit`, undefined);
        expect(commit.status).toBe(409);
        expect(commit.body.error.code).toBe("TRANSACTION_ABORTED");
      });
    } else {
      it("keeps a transaction usable after a failed statement, as MySQL does, and commits the rest", async () => {
        const id = (await gw.post("/v1/transactions", { isolation: "serializable" })).body.transactionId;
        await query("insert into items (name) values ('tx-survivor')", [], { transactionId: id });
        const failed = await query("insert into items (name) values ('dup')", [], { transactionId: id });
        expect(failed.body.error.database.engineCode).toBe(1062);
        const commit = await gw.post(`/v1/transactions/${id}/commit`, undefined);
        expect(commit.body.outcome).toBe("committed");
        expect(await countOf("name = 'tx-survivor'")).toBe(1);
      });
    }

    it("allows savepoints inside a transaction, and refuses SQL that would end it", async () => {
      const id = (await gw.post("/v1/transactions", {})).body.transactionId;
      await query("insert into items (name) values ('sp-kept')", [], { transactionId: id });
      expect((await query("savepoint sp1", [], { transactionId: id })).status).toBe(200);
      await query("insert into items (name) values ('sp-undone')", [], { transactionId: id });
      expect((await query("rollback to savepoint sp1", [], { transactionId: id })).status).toBe(200);
      expect((await query("release savepoint sp1", [], { transactionId: id })).status).toBe(200);
      const ending = await query("commit", [], { transactionId: id });
      expect(ending.body.error).toMatchObject({ code: "INVALID_REQUEST" });
      if (!pg) {
        // MySQL commits implicitly before DDL: inside a gateway transaction or batch that is refused.
        expect((await query("create table sneaky (x int)", [], { transactionId: id })).body.error.code).toBe("INVALID_REQUEST");
        const batch = await gw.post("/v1/batch", { statements: [{ sql: "insert into items (name) values ('ddl-batch')" }, { sql: "create table sneaky (x int)" }] });
        expect(batch.body.error).toMatchObject({ code: "INVALID_REQUEST", issues: [{ path: "statements.1.sql" }] });
      }
      expect((await gw.post(`/v1/transactions/${id}/commit`, undefined)).body.outcome).toBe("committed");
      expect(await countOf("name = 'sp-kept'")).toBe(1);
      expect(await countOf("name = 'sp-undone'")).toBe(0);
    });

    it("rolls back a transaction left idle and says it expired", async () => {
      const id = (await gw.post("/v1/transactions", {})).body.transactionId;
      await query("insert into items (name) values ('tx-idle')", [], { transactionId: id });
      // Watched from outside: a call on the transaction would keep it alive.
      await waitFor(() => openTransactions(gw) === 0, 10000, "the idle transaction to expire");
      const late = await query("select 1", [], { transactionId: id });
      expect(late.body.error.code).toBe("TRANSACTION_EXPIRED");
      expect(await countOf("name = 'tx-idle'")).toBe(0);
      const unknown = await query("select 1", [], { transactionId: "no-such-transaction" });
      expect(unknown.body.error.code).toBe("TRANSACTION_NOT_FOUND");
    });

    if (pg) {
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
        expect(await countOf("name = 'after-leaked-begin'")).toBe(1);
      });
    } else {
      it("does not leak session state between callers", async () => {
        await query("set time_zone = '+05:00'");
        expect((await one("select @@session.time_zone as tz")).tz).toBe("+00:00");
        await query("set @leaked = 1");
        expect((await one("select @leaked as v")).v).toBeNull();
        await query("create temporary table scratch (x int)");
        expect((await query("select * from scratch")).body.error.database.engineCode).toBe(1146);
        await query("prepare leaked from 'select 1'");
        expect((await query("execute leaked")).body.error.database.engineCode).toBe(1243);
        await query("select get_lock('poolgate-leak', 0)");
        expect((await one("select is_used_lock('poolgate-leak') as holder")).holder).toBeNull();
        await query("use information_schema");
        expect(await countOf("1 = 1")).toBeGreaterThan(0);
        // A BEGIN left open would swallow the insert, and the ROLLBACK after it would undo it.
        await query("begin");
        await query("insert into items (name) values ('after-leaked-begin')");
        await query("rollback");
        expect(await countOf("name = 'after-leaked-begin'")).toBe(1);
      });
    }

    it("serves its OpenAPI document and health endpoints", async () => {
      const openApi = await gw.get("/openapi.json");
      expect(Object.keys(openApi.body.paths)).toEqual(expect.arrayContaining(["/v1/query", "/v1/batch", "/v1/transactions"]));
      const health = await gw.get("/healthz");
      expect(health.body).toMatchObject({ status: "ok", clusters: { default: { engine: d.engine, database: { status: "up" } } } });
      expect((await gw.get("/readyz")).body).toEqual({ ready: true });
    });
  });
}
