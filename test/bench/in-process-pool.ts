/**
 * The floor: the same statements through an in-process `pg.Pool` (or mysql2 pool, for mysql:// URLs)
 * of the same size, no HTTP.
 * Usage: in-process-pool.ts <url> <size> <statement> <callers> <durationMs> <warmupMs> -> one JSON line.
 */
import mysql from "mysql2/promise";
import pg from "pg";
import { type BenchStatement, makeStatement, summarise } from "./workload.js";

const [url, size, statement, callers, durationMs, warmupMs] = process.argv.slice(2);
const isMysql = url?.startsWith("mysql:") ?? false;
const pgPool = isMysql ? undefined : new pg.Pool({ connectionString: url, max: Number(size) });
const mysqlPool = isMysql ? mysql.createPool({ uri: url, connectionLimit: Number(size) }) : undefined;
const pool = {
  query: async (sql: string, params: unknown[] | undefined) => (mysqlPool ? mysqlPool.execute(sql, params as never[]) : pgPool?.query(sql, params)),
  end: async () => (mysqlPool ? mysqlPool.end() : pgPool?.end()),
};
const kind = statement as BenchStatement;

async function loop(until: number, record: number[] | null): Promise<void> {
  while (performance.now() < until) {
    const { sql, params } = makeStatement(kind, isMysql ? "mysql" : "postgres");
    const started = performance.now();
    await pool.query(sql, params);
    record?.push(performance.now() - started);
  }
}

const warmupEnd = performance.now() + Number(warmupMs ?? 1000);
await Promise.all(Array.from({ length: Number(callers) }, () => loop(warmupEnd, null)));
const latencies: number[] = [];
const cpuBefore = process.cpuUsage();
const started = performance.now();
await Promise.all(Array.from({ length: Number(callers) }, () => loop(started + Number(durationMs), latencies)));
const elapsedMs = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
await pool.end();
const summary = summarise(latencies, elapsedMs);
process.stdout.write(`${JSON.stringify({ ...summary, errors: 0, cpuUsPerRequest: (cpu.user + cpu.system) / summary.requests })}\n`);
