/**
 * The result cache's figures (issue 38): the same point select through the gateway, uncached and then
 * with `cache` (one entry, so every measured call is a hit), on both engines, with the memory store
 * and with a real redis-server (Valkey's protocol) as the shared store. Throughput and p50 of hits
 * against the uncached read: the targets are ≥ 5× and ≤ ⅓. The correctness ledger (0 stale token
 * reads, 0 missed acknowledged writes, a Valkey outage mid-run) is a CI test:
 * test/integration/result-cache.test.ts.
 */
import { startTestValkey } from "../support/valkey.js";
import type { DriverSpec } from "./load-driver.js";
import { runJson, startGateway } from "./processes.js";
import type { CacheRow } from "./results.js";
import type { DriverResult } from "./workload.js";

export interface CacheWork {
  engines: { engine: "postgres" | "mysql"; benchUrl: string }[];
  poolSize: number;
  callers: number;
  durationMs: number;
  warmupMs: number;
  rounds: number;
}

type Step = <T>(label: string, estimateS: number, run: () => Promise<T>) => Promise<T>;

const median = (results: DriverResult[]): DriverResult => [...results].sort((a, b) => a.throughput - b.throughput)[Math.floor((results.length - 1) / 2)] as DriverResult;

export async function runCacheBench(work: CacheWork, step: Step): Promise<CacheRow[]> {
  const rows: CacheRow[] = [];
  const valkey = await startTestValkey();
  try {
    for (const { engine, benchUrl } of work.engines) {
      for (const store of ["memory", "valkey"] as const) {
        const cache = store === "memory" ? {} : { store, valkey: { url: valkey.url } };
        const server = await step(`cache (${engine}, ${store}): start`, 2, () => startGateway({ clusters: { default: { writerUrl: benchUrl } }, pool: { maxSize: work.poolSize }, cache }));
        try {
          const uncached: DriverResult[] = [];
          const hits: DriverResult[] = [];
          for (let round = 1; round <= work.rounds; round++) {
            for (const cached of [false, true]) {
              const label = `cache (${engine}, ${store}): ${cached ? "hits" : "uncached"} ${round}/${work.rounds}`;
              const result = await step(label, (work.warmupMs + work.durationMs) / 1000 + 0.5, () => {
                const spec: DriverSpec = {
                  url: server.url,
                  path: "/v1/query",
                  statement: "hot",
                  dialect: engine,
                  callers: work.callers,
                  durationMs: work.durationMs,
                  warmupMs: work.warmupMs,
                  ...(cached ? { cache: { ttlMs: 3_600_000 } } : {}),
                };
                return runJson<DriverResult>("./load-driver.js", [JSON.stringify(spec)]);
              });
              (cached ? hits : uncached).push(result);
            }
          }
          const base = median(uncached);
          const hit = median(hits);
          const errors = [...uncached, ...hits].reduce((sum, result) => sum + result.errors, 0);
          rows.push({
            engine,
            store,
            uncachedThroughput: base.throughput,
            uncachedP50: base.p50,
            hitThroughput: hit.throughput,
            hitP50: hit.p50,
            hitThroughputRatio: hit.throughput / base.throughput,
            hitP50Ratio: hit.p50 / base.p50,
            errors,
            firstError: [...uncached, ...hits].find((result) => result.firstError)?.firstError,
          });
        } finally {
          await server.stop();
        }
      }
    }
  } finally {
    await valkey.close();
  }
  return rows;
}
