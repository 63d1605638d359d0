/**
 * Callers that talk to the database (or to PgBouncer) themselves, no HTTP: through one pool in this
 * process (`pg.Pool` / mysql2 pool: the floor any gateway is measured against), or with a new
 * connection for every request (what a Lambda without a pool does, opening and closing its own
 * connection per invocation). The engine follows the URL's scheme. Run as its own process.
 * Usage: direct-driver.ts '<json DirectSpec>' -> prints one JSON DriverResult line (plus cpuUsPerRequest).
 */
import mysql from "mysql2/promise";
import pg from "pg";
import { type BenchStatement, type DriverResult, makeStatement, summarise } from "./workload.js";

export interface DirectSpec {
  url: string;
  connection: "pool" | "per-request";
  poolSize: number;
  statement: BenchStatement;
  callers: number;
  durationMs?: number;
  requestsPerCaller?: number;
  warmupMs: number;
  /** SQL run after each statement on the same connection (what a gateway's consistency token costs: a second round trip). */
  followUp?: string;
}

type Run = (sql: string, params: unknown[] | undefined) => Promise<unknown>;

function pooled(url: string, size: number, followUp: string | undefined): { run: Run; end: () => Promise<void> } {
  if (url.startsWith("mysql:")) {
    const pool = mysql.createPool({ uri: url, connectionLimit: size });
    return { run: (sql, params) => pool.execute(sql, params as never[]), end: () => pool.end() };
  }
  const pool = new pg.Pool({ connectionString: url, max: size });
  if (followUp === undefined) return { run: (sql, params) => pool.query(sql, params), end: () => pool.end() };
  return {
    run: async (sql, params) => {
      const client = await pool.connect();
      try {
        await client.query(sql, params);
        return await client.query(followUp);
      } finally {
        client.release();
      }
    },
    end: () => pool.end(),
  };
}

/** A one-shot connection gains nothing from a server-side prepare, so mysql2 uses query() here. */
function perRequest(url: string): Run {
  if (url.startsWith("mysql:")) {
    return async (sql, params) => {
      const connection = await mysql.createConnection({ uri: url });
      try {
        return await connection.query(sql, params);
      } finally {
        await connection.end().catch(() => undefined);
      }
    };
  }
  return async (sql, params) => {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      return await client.query(sql, params);
    } finally {
      await client.end().catch(() => undefined);
    }
  };
}

async function drive(spec: DirectSpec): Promise<void> {
  const pool = spec.connection === "pool" ? pooled(spec.url, spec.poolSize, spec.followUp) : undefined;
  const run = pool?.run ?? perRequest(spec.url);
  const dialect = spec.url.startsWith("mysql:") ? "mysql" : "postgres";
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const send = async (record: boolean) => {
    const { sql, params } = makeStatement(spec.statement, dialect);
    const started = performance.now();
    try {
      await run(sql, params);
      if (record) latencies.push(performance.now() - started);
    } catch (err) {
      errors++;
      firstError ??= err instanceof Error ? err.message : String(err);
    }
  };
  const warmupEnd = performance.now() + spec.warmupMs;
  await Promise.all(
    Array.from({ length: Math.min(spec.callers, 32) }, async () => {
      while (performance.now() < warmupEnd) await send(false);
    }),
  );
  errors = 0;
  firstError = undefined;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const end = started + (spec.durationMs ?? Number.POSITIVE_INFINITY);
  await Promise.all(
    Array.from({ length: spec.callers }, async () => {
      for (let i = 0; spec.requestsPerCaller === undefined ? performance.now() < end : i < spec.requestsPerCaller; i++) await send(true);
    }),
  );
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  await pool?.end();
  const summary = summarise(latencies, elapsedMs);
  const result: DriverResult & { cpuUsPerRequest: number } = {
    ...summary,
    errors,
    firstError,
    cpuUsPerRequest: (cpu.user + cpu.system) / Math.max(1, summary.requests),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await drive(JSON.parse(process.argv[2] ?? "{}") as DirectSpec);
