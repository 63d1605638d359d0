/**
 * Streamed reads (POST /v1/query/stream and the SDK's client.stream) over a real server, written once
 * and run on PostgreSQL and MariaDB: values exactly as /v1/query gives them, results beyond the
 * buffered limits, a slow reader holding one session while the database waits and others are served,
 * a failure after the first rows reported as the last line, a caller that goes away freeing its
 * session at once, a read-only principal refused a write, and the SDK's iterator with an early break.
 * The differences between the engines are in the target's `StreamDialect`.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, DatabaseError, type PoolgateClient } from "../../../client/index.js";
import type { GatewayConfigInput } from "../../../gateway/config/schema.js";
import { bearer, type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { waitFor } from "../../support/wait-for.js";

export interface StreamDialect {
  /** A FROM item producing rows 1..n in a column named g (in order as produced). */
  series(n: number): string;
  /** A select list over g with many kinds of values (numbers beyond a double, decimals, text, JSON, times, NULL). */
  manyTypes: string;
  /** repeat('x', n) */
  repeat(n: number): string;
  /** A statement that returns rows 1..4999 and then fails on the server; the failure's code as the database reports it. */
  failsAtRow5000: { sql: string; sqlstate: string; engineCode?: number };
  /** A write that returns rows (RETURNING). */
  writeReturning: string;
}

/** PostgreSQL's texts for the suite (the local server and the Aurora PostgreSQL stand-in alike). */
export const POSTGRES_STREAM_DIALECT: StreamDialect = {
  series: (n) => `generate_series(1, ${n}) g`,
  manyTypes:
    "g, g::int8 * 1000000000000 as big, (g / 3.0)::numeric(20,10) as num, 'text ' || g as t, null::text as nothing, " +
    "timestamptz '2024-01-02 03:04:05+00' + g * interval '1 second' as ts, jsonb_build_object('g', g, 'big', 12345678901234567890) as j, " +
    "array[g, g + 1] as a, g % 2 = 0 as even, '\\x0102'::bytea as bytes, 1.5::float8 * g as f",
  repeat: (n) => `repeat('x', ${n})`,
  failsAtRow5000: { sql: "select 1/(g-5000) as v from generate_series(1, 10000) g", sqlstate: "22012" },
  writeReturning: "insert into ledger (note) values ('streamed') returning note",
};

export interface StreamTarget {
  name: string;
  dialect: StreamDialect;
  /** A fresh database (with a table `ledger (note text)`), its URL, and a way to see the gateway's sessions there. */
  setup(): Promise<StreamDatabase>;
}

export interface StreamDatabase {
  url: string;
  /** Whether the gateway has a session on the database still running a statement whose text contains `marker`. */
  statementRunning(marker: string): Promise<boolean>;
  ledgerRows(): Promise<number>;
  cleanup(): Promise<void>;
}

const TOKENS = { writer: "stream-writer-token-0123456789abcdef", other: "stream-other-token-0123456789abcdefg", reader: "stream-reader-token-0123456789abcdef", operator: "stream-operator-token-0123456789abcd" };
const FETCH_ROWS = 100;

/** A streamed answer read through Node's http, so the test can pause and drop its socket. */
interface OpenStream {
  status: number;
  response: http.IncomingMessage;
  request: http.ClientRequest;
}

function openStream(baseUrl: string, body: unknown, token: string): Promise<OpenStream> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(`${baseUrl}/v1/query/stream`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload), ...bearer(token) },
      agent: false,
    });
    request.on("response", (response) => resolve({ status: response.statusCode ?? 0, response, request }));
    request.on("error", reject);
    request.end(payload);
  });
}

/** Reads lines from a response until `enough` says so (then pauses it), or to its end. */
function readLines(response: http.IncomingMessage, lines: string[], enough: (lines: string[]) => boolean = () => false): Promise<"paused" | "ended"> {
  return new Promise((resolve, reject) => {
    let tail = "";
    const onData = (chunk: Buffer) => {
      const parts = (tail + chunk.toString("utf8")).split("\n");
      tail = parts.pop() ?? "";
      lines.push(...parts);
      if (enough(lines)) {
        response.pause();
        response.off("data", onData);
        // What was read past the last whole line goes back in front of the stream.
        if (tail.length > 0) response.unshift(Buffer.from(tail, "utf8"));
        resolve("paused");
      }
    };
    response.on("data", onData);
    response.once("end", () => {
      if (tail.length > 0) lines.push(tail);
      resolve("ended");
    });
    response.once("error", reject);
    response.resume();
  });
}

async function readAll(stream: OpenStream): Promise<string[]> {
  const lines: string[] = [];
  await readLines(stream.response, lines);
  return lines;
}

export function defineStreamSuite(target: StreamTarget): void {
  const d = target.dialect;

  describe(`streamed reads on ${target.name}`, () => {
    let db: StreamDatabase;
    let gateway: TestGateway;
    let tokens: TokensFile;
    let client: PoolgateClient;

    const config = (url: string, tokensPath: string): GatewayConfigInput => ({
      clusters: { default: { writerUrl: url } },
      pool: { maxSize: 2, acquireTimeoutMs: 5000 },
      limits: { maxResultBytes: 1 << 20 },
      streams: { fetchRows: FETCH_ROWS },
      auth: {
        bearer: { tokensFile: tokensPath },
        principals: {
          writer: { clusters: { default: "read-write" } },
          other: { clusters: { default: "read-write" } },
          reader: { clusters: { default: "read-only" } },
          operator: { admin: true },
        },
      },
    });

    const pool = async (): Promise<{ active: number; total: number }> => (await gateway.get("/healthz", bearer(TOKENS.operator))).body.clusters.default.pool;
    const query = (sql: string, token = TOKENS.writer, rowMode?: "array") => gateway.post("/v1/query", { sql, ...(rowMode ? { rowMode } : {}) }, bearer(token));

    beforeAll(async () => {
      db = await target.setup();
      tokens = writeTokensFile(TOKENS);
      gateway = await startTestGateway(config(db.url, tokens.path));
      client = createClient({ url: gateway.baseUrl, headers: bearer(TOKENS.writer) });
    });

    afterAll(async () => {
      await client?.close();
      await gateway?.stop();
      await db?.cleanup();
      tokens?.remove();
    });

    it("streams rows whose values are exactly /v1/query's, in both row modes, over several batches", async () => {
      const sql = `select ${d.manyTypes} from ${d.series(FETCH_ROWS * 3 + 7)}`;
      for (const rowMode of ["object", "array"] as const) {
        const buffered = await query(sql, TOKENS.writer, rowMode === "array" ? "array" : undefined);
        expect(buffered.status).toBe(200);
        const stream = await openStream(gateway.baseUrl, { sql, rowMode }, TOKENS.writer);
        expect(stream.status).toBe(200);
        expect(stream.response.headers["content-type"]).toContain("application/x-ndjson");
        const lines = await readAll(stream);
        expect(JSON.parse(lines[0] as string)).toEqual({ columns: buffered.body.columns });
        const rows = lines.slice(1, -1).map((line) => JSON.parse(line) as unknown);
        expect(rows).toEqual(buffered.body.rows);
        expect(JSON.parse(lines.at(-1) as string)).toEqual({ command: buffered.body.command, rowCount: FETCH_ROWS * 3 + 7, attempts: 1 });
      }
      await waitFor(async () => (await pool()).active === 0, 5000, "the session back in the pool");
    });

    it("streams a result larger than limits.maxResultBytes whole, where /v1/query refuses it", async () => {
      const sql = `select g, ${d.repeat(400)} as pad from ${d.series(5000)}`;
      expect((await query(sql)).body.error.code).toBe("RESULT_TOO_LARGE");
      const lines = await readAll(await openStream(gateway.baseUrl, { sql, rowMode: "array" }, TOKENS.writer));
      expect(lines).toHaveLength(5002);
      const rows = lines.slice(1, -1).map((line) => JSON.parse(line) as [number | string, string]);
      // Every g once (the MySQL series is not produced in order, and its g is a BIGINT, an exact string).
      expect(new Set(rows.map(([g]) => Number(g))).size).toBe(5000);
      expect(rows.reduce((sum, [g]) => sum + Number(g), 0)).toBe((5000 * 5001) / 2);
      expect(rows.every(([, pad]) => pad === "x".repeat(400))).toBe(true);
      expect(JSON.parse(lines[5001] as string)).toMatchObject({ rowCount: 5000 });
    });

    it("still refuses a single row larger than limits.maxResultBytes, as an ordinary error before any row", async () => {
      const stream = await openStream(gateway.baseUrl, { sql: `select ${d.repeat(2 << 20)} as huge` }, TOKENS.writer);
      expect(stream.status).toBe(413);
      expect(JSON.parse((await readAll(stream)).join(""))).toMatchObject({ error: { code: "RESULT_TOO_LARGE" } });
      await waitFor(async () => (await pool()).active === 0, 5000, "the session back in the pool");
    });

    it("answers a statement that fails before its first row with an ordinary HTTP error", async () => {
      const stream = await openStream(gateway.baseUrl, { sql: "select * from no_such_table_for_streams" }, TOKENS.writer);
      expect(stream.status).toBe(400);
      expect(JSON.parse((await readAll(stream)).join(""))).toMatchObject({ error: { code: "DATABASE_ERROR" } });
    });

    it("holds one session for a slow reader while the database waits, and serves other callers meanwhile", async () => {
      const marker = "slow_reader_marker";
      const rows = 100000;
      const stream = await openStream(gateway.baseUrl, { sql: `select g, ${d.repeat(300)} as ${marker} from ${d.series(rows)}`, rowMode: "array" }, TOKENS.writer);
      expect(stream.status).toBe(200);
      const lines: string[] = [];
      // Read a few batches, then stop reading: the socket fills and the gateway stops asking the database.
      expect(await readLines(stream.response, lines, (read) => read.length > FETCH_ROWS * 3)).toBe("paused");
      expect(await pool()).toMatchObject({ active: 1 });
      // The statement has not run to its end on the server: it waits for the gateway to ask for more.
      expect(await db.statementRunning(marker)).toBe(true);
      const other = await query("select 1 as one", TOKENS.other);
      expect(other.status).toBe(200);
      await waitFor(async () => (await pool()).active === 1, 5000, "the other caller's session back in the pool");
      expect(await db.statementRunning(marker)).toBe(true);
      // The reader catches up: every row arrives, then the end line.
      await readLines(stream.response, lines);
      expect(lines.filter((line) => line.length > 0)).toHaveLength(rows + 2);
      expect(JSON.parse(lines.at(-1) as string)).toMatchObject({ rowCount: rows });
      await waitFor(async () => (await pool()).active === 0, 5000, "the session back in the pool");
    });

    it("reports a failure after the first rows as the stream's last line, and frees the session", async () => {
      const stream = await openStream(gateway.baseUrl, { sql: d.failsAtRow5000.sql, rowMode: "array" }, TOKENS.writer);
      expect(stream.status).toBe(200);
      const lines = (await readAll(stream)).filter((line) => line.length > 0);
      const rows = lines.slice(1, -1);
      expect(rows.length).toBeGreaterThanOrEqual(FETCH_ROWS);
      expect(rows.length).toBeLessThan(5000);
      const last = JSON.parse(lines.at(-1) as string);
      expect(last.error).toMatchObject({ code: "DATABASE_ERROR", retryable: false, database: { sqlstate: d.failsAtRow5000.sqlstate } });
      if (d.failsAtRow5000.engineCode !== undefined) expect(last.error.database.engineCode).toBe(d.failsAtRow5000.engineCode);
      await waitFor(async () => (await pool()).active === 0, 5000, "the session back in the pool");
      expect((await query("select 2 as two")).body.rows).toEqual([{ two: 2 }]);
    });

    it("frees the session at once when the caller goes away mid-stream, cancelling the statement", async () => {
      const marker = "gone_caller_marker";
      const stream = await openStream(gateway.baseUrl, { sql: `select g, ${d.repeat(300)} as ${marker} from ${d.series(100000)}`, rowMode: "array" }, TOKENS.writer);
      const lines: string[] = [];
      await readLines(stream.response, lines, (read) => read.length > FETCH_ROWS);
      expect(await pool()).toMatchObject({ active: 1 });
      stream.request.destroy();
      await waitFor(async () => (await pool()).active === 0, 5000, "the session back in the pool");
      await waitFor(async () => !(await db.statementRunning(marker)), 5000, "the statement to end on the server");
      expect((await query("select 3 as three")).body.rows).toEqual([{ three: 3 }]);
    });

    it("refuses a read-only principal's write before anything runs, and streams its reads", async () => {
      const refused = await openStream(gateway.baseUrl, { sql: d.writeReturning }, TOKENS.reader);
      expect(refused.status).toBe(403);
      expect(JSON.parse((await readAll(refused)).join(""))).toMatchObject({ error: { code: "FORBIDDEN" } });
      expect(await db.ledgerRows()).toBe(0);
      const read = await readAll(await openStream(gateway.baseUrl, { sql: `select g from ${d.series(250)}` }, TOKENS.reader));
      expect(read.filter((line) => line.length > 0)).toHaveLength(252);
      await waitFor(async () => (await pool()).active === 0, 5000, "the session back in the pool");
    });

    it("lets the SDK iterate a stream, with its columns and end, and matches /v1/query", async () => {
      const sql = `select ${d.manyTypes} from ${d.series(FETCH_ROWS * 2 + 1)}`;
      const rows = client.stream(sql);
      const seen: unknown[] = [];
      for await (const row of rows) seen.push(row);
      const buffered = await client.query(sql);
      expect(seen).toEqual(buffered.rows);
      expect(await rows.columns).toEqual(buffered.columns);
      expect(rows.end).toMatchObject({ rowCount: FETCH_ROWS * 2 + 1, attempts: 1 });
    });

    it("resolves a stream's columns before the first row, when they are awaited before the loop", async () => {
      const rows = client.stream<{ g: unknown }>(`select g from ${d.series(3)}`);
      const columns = await rows.columns;
      expect(columns.map((column) => column.name)).toEqual(["g"]);
      const seen: unknown[] = [];
      for await (const row of rows) seen.push(Number(row.g));
      expect(seen).toEqual([1, 2, 3]);
      expect(rows.end).toMatchObject({ rowCount: 3 });
    }, 15_000);

    it("frees the session when a stream whose columns were read is cancelled without being iterated", async () => {
      const rows = client.stream(`select g, ${d.repeat(300)} from ${d.series(100000)}`);
      expect((await rows.columns).length).toBe(2);
      await rows.cancel();
      await waitFor(async () => (await pool()).active === 0, 5000, "the session back in the pool");
    }, 15_000);

    it("aborts the request when the SDK's loop breaks early, freeing the session at once", async () => {
      let taken = 0;
      for await (const row of client.stream<unknown[]>(`select g, ${d.repeat(300)} from ${d.series(100000)}`, [], { rowMode: "array" })) {
        expect(row).toHaveLength(2);
        if (++taken === 10) break;
      }
      expect(taken).toBe(10);
      await waitFor(async () => (await pool()).active === 0, 5000, "the session back in the pool");
    });

    it("throws the registry's error from the SDK's loop when the statement fails midway", async () => {
      let taken = 0;
      const iterate = async () => {
        for await (const row of client.stream(d.failsAtRow5000.sql)) {
          expect(row).toBeDefined();
          taken++;
        }
      };
      const failure = await iterate().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(DatabaseError);
      expect((failure as DatabaseError).sqlstate).toBe(d.failsAtRow5000.sqlstate);
      expect(taken).toBeGreaterThan(0);
    });
  });
}
