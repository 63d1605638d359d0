/**
 * Callers that talk to the database (or to PgBouncer) themselves, no HTTP: through one pool in this
 * process (`pg.Pool` / mysql2 pool: the floor any gateway is measured against), or with a new
 * connection for every request (what a Lambda without a pool does, opening and closing its own
 * connection per invocation). The engine follows the URL's scheme. Run as its own process.
 * Usage: direct-driver.ts '<json DirectSpec>' -> prints one JSON DriverResult line (plus cpuUsPerRequest).
 */
import mysql from "mysql2/promise";
import pg from "pg";
import { engineForUrl } from "../gateway/engines/engine-for-url.js";
import { statementMode } from "../gateway/engines/engine-statement.js";
import { type BenchStatement, type DriverResult, makeStatement, summarise } from "./workload.js";

export interface DirectSpec {
  url: string;
  /**
   * One pool in this process, a new connection per request, or (for one caller) one session of the
   * gateway's own engine, writing with the consistency token the gateway asks for (in the write's round trip).
   */
  connection: "pool" | "per-request" | "gateway-engine";
  poolSize: number;
  statement: BenchStatement;
  callers: number;
  durationMs?: number;
  requestsPerCaller?: number;
  warmupMs: number;
}

type Run = (sql: string, params: unknown[] | undefined) => Promise<unknown>;

function pooled(url: string, size: number): { run: Run; end: () => Promise<void> } {
  if (url.startsWith("mysql:")) {
    const pool = mysql.createPool({ uri: url, connectionLimit: size });
    return { run: (sql, params) => pool.execute(sql, params as never[]), end: () => pool.end() };
  }
  const pool = new pg.Pool({ connectionString: url, max: size });
  return { run: (sql, params) => pool.query(sql, params), end: () => pool.end() };
}

/** The gateway's engine on one session, as the executor runs an autocommit write: statement and token together. */
async function gatewayEngine(url: string): Promise<{ run: Run; end: () => Promise<void> }> {
  const engine = engineForUrl(url, { preparedCacheSize: 256, cancelGraceMs: 1000, writingFunctions: [] });
  const connection = await engine.connect({ url }, 10000);
  const options = { timeoutMs: 10000, bigNumbers: "string" as const, maxResultBytes: 1 << 20, maxResultRows: 1000 };
  const mode = statementMode("as written", false, true);
  return {
    run: async (sql, params) => {
      const result = await connection.execute(engine.statement(sql, (params ?? []) as never[], mode), options);
      if (result.command === "INSERT" && result.commitPosition === undefined) throw new Error("the engine answered the write without its position");
      return result;
    },
    end: () => connection.close(),
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
  if (spec.connection === "gateway-engine" && spec.callers !== 1) throw new Error("the gateway-engine target is one session: one caller");
  const pool = spec.connection === "pool" ? pooled(spec.url, spec.poolSize) : spec.connection === "gateway-engine" ? await gatewayEngine(spec.url) : undefined;
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
