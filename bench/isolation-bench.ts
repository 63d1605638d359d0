/**
 * What clean sessions between principals cost: the steady load (point selects) with its callers
 * spread over 1, 2 and 20 principals, interleaved (caller i is principal i mod N). Each principal's
 * sessions are reset in full (DISCARD ALL) before another principal gets them, and the pool prefers
 * to give a principal its own sessions back, so one principal pays no full reset and a few pay little.
 * Every session also releases its session-level locks as it comes back (pg_advisory_unlock_all, one
 * round trip after an autocommit statement): counted as release resets per request.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DriverSpec } from "./load-driver.js";
import { cpuMicros, runJson, type Server, startGateway } from "./processes.js";
import type { IsolationRow } from "./results.js";
import type { DriverResult } from "./workload.js";

const ADMIN_TOKEN = "bench-operator-token-0123456789abcdef";
const tokenOf = (i: number) => `bench-principal-${String(i).padStart(2, "0")}-token-0123456789abcdef`;

/** Full resets and resets on release so far, over every pool of the gateway (from /healthz, as an operator). */
async function resetsSoFar(server: Server): Promise<{ full: number; onRelease: number }> {
  const response = await fetch(`${server.url}/healthz`, { headers: { "x-poolgate-auth": `Bearer ${ADMIN_TOKEN}` } });
  const health = (await response.json()) as { clusters: Record<string, { endpoints: { pool: { resets: number; releaseResets: number } }[] }> };
  const pools = Object.values(health.clusters).flatMap((cluster) => cluster.endpoints.map((endpoint) => endpoint.pool));
  return { full: pools.reduce((sum, pool) => sum + pool.resets, 0), onRelease: pools.reduce((sum, pool) => sum + pool.releaseResets, 0) };
}

export interface IsolationWork {
  benchUrl: string;
  poolSize: number;
  callers: number;
  durationMs: number;
  warmupMs: number;
  rounds: number;
}

export async function runIsolation(work: IsolationWork, step: <T>(label: string, estimateS: number, run: () => Promise<T>) => Promise<T>): Promise<IsolationRow[]> {
  const rows: IsolationRow[] = [];
  for (const principals of [1, 2, 20]) {
    const dir = mkdtempSync(join(tmpdir(), "poolgate-bench-tokens-"));
    const tokensFile = join(dir, "tokens.json");
    const tokens = Array.from({ length: principals }, (_, i) => tokenOf(i));
    writeFileSync(tokensFile, JSON.stringify({ ops: ADMIN_TOKEN, ...Object.fromEntries(tokens.map((token, i) => [`p${i}`, token])) }));
    const grants = Object.fromEntries(tokens.map((_, i) => [`p${i}`, { clusters: { default: "read-write" } }]));
    const server = await step(`${principals} principal(s): start`, 2, () =>
      startGateway({
        clusters: { default: { writerUrl: work.benchUrl } },
        pool: { maxSize: work.poolSize },
        auth: { bearer: { tokensFile }, principals: { ...grants, ops: { admin: true } } },
      }),
    );
    try {
      const results: (DriverResult & { resets: number; releaseResets: number; cpuUs: number })[] = [];
      for (let round = 1; round <= work.rounds; round++) {
        results.push(
          await step(`${principals} principal(s): round ${round}/${work.rounds}`, (work.warmupMs + work.durationMs) / 1000 + 0.5, async () => {
            const pid = server.child.pid ?? 0;
            const resetsBefore = await resetsSoFar(server);
            const cpuBefore = cpuMicros(pid);
            const spec: DriverSpec = { url: server.url, path: "/v1/query", statement: "point", dialect: "postgres", callers: work.callers, durationMs: work.durationMs, warmupMs: work.warmupMs, tokens };
            const result = await runJson<DriverResult>("./load-driver.js", [JSON.stringify(spec)]);
            const resetsAfter = await resetsSoFar(server);
            return { ...result, resets: resetsAfter.full - resetsBefore.full, releaseResets: resetsAfter.onRelease - resetsBefore.onRelease, cpuUs: cpuMicros(pid) - cpuBefore };
          }),
        );
      }
      const sorted = [...results].sort((a, b) => a.throughput - b.throughput);
      const median = sorted[Math.floor((sorted.length - 1) / 2)] as (typeof results)[number];
      const warmupRequests = (median.throughput * work.warmupMs) / 1000;
      rows.push({
        principals,
        throughput: median.throughput,
        p50: median.p50,
        p99: median.p99,
        resetsPerRequest: median.resets / Math.max(1, median.requests + warmupRequests),
        releaseResetsPerRequest: median.releaseResets / Math.max(1, median.requests + warmupRequests),
        cpuUsPerRequest: median.cpuUs / Math.max(1, median.requests + warmupRequests),
        errors: results.reduce((sum, result) => sum + result.errors, 0),
        firstError: results.find((result) => result.firstError)?.firstError,
      });
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return rows;
}
