/**
 * The result cache's figures (issue 38), the `cache` key of bench.json, on both engines:
 * - hits: the same point select through the gateway, uncached and then with `cache` (one entry, so every
 *   measured call is a hit), with the memory store and with a real redis-server (Valkey's protocol) as
 *   the shared store; once on loopback and once with the database behind a forwarder that adds
 *   `networkDelayMs` to each round trip (test/support/network-delay.ts: Aurora in another AZ, where
 *   loopback flatters the uncached read). Throughput and p50 of hits against the uncached read: the
 *   targets are ≥ 5× and ≤ ⅓. Beside them, HTTP alone (the echo server under the same driver): what a
 *   hit cannot go under on this machine, where the load driver shares the cores with the server.
 * - ledger: writers and cached readers on two gateway processes sharing a redis-server, readers with and
 *   without tokens, Valkey stopped and started in the middle (test/support/cache-ledger.ts, the CI test's
 *   driver): staleTokenReads, missedAckedWrites and failed requests must all be 0.
 */
import { startDelayedForwarder } from "../test/support/network-delay.js";
import { runCacheLedger } from "../test/support/cache-ledger.js";
import { startTestValkey, type TestValkey } from "../test/support/valkey.js";
import { LEDGER_TABLE } from "./databases.js";
import type { DriverSpec } from "./load-driver.js";
import { cpuMicros, runJson, type Server, startGateway, startServer } from "./processes.js";
import type { CacheHttpAlone, CacheLedgerRow, CacheResults, CacheRow } from "./results.js";
import type { DriverResult } from "./workload.js";

export interface CacheWork {
  engines: { engine: "postgres" | "mysql"; benchUrl: string }[];
  poolSize: number;
  callers: number;
  durationMs: number;
  warmupMs: number;
  /** Unmeasured load before a server's first measured run (its JIT settles). */
  serverWarmupMs: number;
  rounds: number;
  /** The simulated network's added round-trip time to the database, ms (0: no such row). */
  networkDelayMs: number;
}

type Step = <T>(label: string, estimateS: number, run: () => Promise<T>) => Promise<T>;

const median = (results: Measured[]): Measured => [...results].sort((a, b) => a.throughput - b.throughput)[Math.floor((results.length - 1) / 2)] as Measured;

type Measured = DriverResult & { serverCpuUsPerRequest: number };

/** One run of the driver against `server`, with the server's CPU per request over it. */
async function measure(server: Server, spec: DriverSpec): Promise<Measured> {
  const pid = server.child.pid ?? 0;
  const before = cpuMicros(pid);
  const result = await runJson<DriverResult>("./load-driver.js", [JSON.stringify(spec)]);
  return { ...result, serverCpuUsPerRequest: (cpuMicros(pid) - before) / Math.max(1, result.requests + result.errors) };
}

const driverSpec = (work: CacheWork, url: string, engine: "postgres" | "mysql", cached: boolean, durationMs = work.durationMs): DriverSpec => ({
  url,
  path: "/v1/query",
  statement: "hot",
  dialect: engine,
  callers: work.callers,
  durationMs,
  warmupMs: work.warmupMs,
  ...(cached ? { cache: { ttlMs: 3_600_000 } } : {}),
});

/** HTTP alone: the echo server (parses the request, answers `[]`) under the same driver. */
async function measureHttpAlone(work: CacheWork, step: Step): Promise<CacheHttpAlone> {
  const echo = await startServer("./naive-server.js", ["echo", "-", "0"], {}, /^(\d+)\n/);
  try {
    const spec = driverSpec(work, echo.url, "postgres", false);
    await step("cache: HTTP alone (echo server), warm-up", work.serverWarmupMs / 1000, () => runJson("./load-driver.js", [JSON.stringify({ ...spec, durationMs: work.serverWarmupMs, warmupMs: 0 })]));
    const runs: Measured[] = [];
    for (let round = 1; round <= work.rounds; round++) runs.push(await step(`cache: HTTP alone ${round}/${work.rounds}`, (work.warmupMs + work.durationMs) / 1000, () => measure(echo, spec)));
    const mid = median(runs);
    return { throughput: mid.throughput, p50: mid.p50, serverCpuUsPerRequest: mid.serverCpuUsPerRequest, driverCpuUsPerRequest: mid.driverCpuUsPerRequest ?? Number.NaN };
  } finally {
    await echo.stop();
  }
}

async function measureHits(work: CacheWork, engine: "postgres" | "mysql", databaseUrl: string, network: string, store: "memory" | "valkey", valkey: TestValkey, step: Step): Promise<CacheRow> {
  const cache = store === "memory" ? {} : { store, valkey: { url: valkey.url } };
  const label = `cache (${engine}, ${store}, ${network})`;
  const server = await step(`${label}: start`, 2, () => startGateway({ clusters: { default: { writerUrl: databaseUrl } }, pool: { maxSize: work.poolSize }, cache }));
  try {
    const warmupMs = work.serverWarmupMs / 2;
    for (const cached of [false, true]) {
      await step(`${label}: warm-up`, warmupMs / 1000, () => runJson("./load-driver.js", [JSON.stringify({ ...driverSpec(work, server.url, engine, cached, warmupMs), warmupMs: 0 })]));
    }
    const uncached: Measured[] = [];
    const hits: Measured[] = [];
    for (let round = 1; round <= work.rounds; round++) {
      for (const cached of [false, true]) {
        const result = await step(`${label}: ${cached ? "hits" : "uncached"} ${round}/${work.rounds}`, (work.warmupMs + work.durationMs) / 1000 + 0.5, () => measure(server, driverSpec(work, server.url, engine, cached)));
        (cached ? hits : uncached).push(result);
      }
    }
    const base = median(uncached);
    const hit = median(hits);
    return {
      engine,
      store,
      network,
      uncachedThroughput: base.throughput,
      uncachedP50: base.p50,
      hitThroughput: hit.throughput,
      hitP50: hit.p50,
      hitThroughputRatio: hit.throughput / base.throughput,
      hitP50Ratio: hit.p50 / base.p50,
      hitRatioRange: [Math.min(...hits.map((h) => h.throughput)) / base.throughput, Math.max(...hits.map((h) => h.throughput)) / base.throughput],
      uncachedServerCpuUsPerRequest: base.serverCpuUsPerRequest,
      hitServerCpuUsPerRequest: hit.serverCpuUsPerRequest,
      hitDriverCpuUsPerRequest: hit.driverCpuUsPerRequest ?? Number.NaN,
      errors: [...uncached, ...hits].reduce((sum, result) => sum + result.errors, 0),
      firstError: [...uncached, ...hits].find((result) => result.firstError)?.firstError,
    };
  } finally {
    await server.stop();
  }
}

/** POST /v1/query to a gateway process; a request that cannot be sent is the ledger's failure. */
const poster = (url: string) => async (body: object) => {
  const response = await fetch(`${url}/v1/query`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, never> };
};

/** The ledger on one engine: two gateway processes sharing `valkey` (stopped and started in the middle). */
async function runLedger(work: CacheWork, engine: "postgres" | "mysql", benchUrl: string, valkey: TestValkey, step: Step): Promise<CacheLedgerRow> {
  const placeholder = engine === "postgres" ? "$1" : "?";
  const config = {
    clusters: { default: { writerUrl: benchUrl } },
    pool: { maxSize: work.poolSize },
    topology: { checkIntervalMs: 100 },
    cache: { store: "valkey" as const, valkey: { url: valkey.url, commandTimeoutMs: 1000 } },
  };
  const minPhaseMs = 2 * work.durationMs;
  return step(`cache ledger (${engine}): two gateways, Valkey stopped and started`, (3 * minPhaseMs) / 1000 + 6, async () => {
    const gateways = [await startGateway(config), await startGateway(config)];
    try {
      const posts = gateways.map((gateway) => poster(gateway.url));
      for (const post of posts) {
        // Each task vouches for the store once it has connected and renewed the epochs.
        const deadline = Date.now() + 20000;
        while ((await post({ sql: "SELECT 1 AS one", cache: { ttlMs: 1000 } })).body.cache === "bypass") {
          if (Date.now() > deadline) throw new Error("a ledger gateway never used Valkey");
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      const startedAt = performance.now();
      const ledger = await runCacheLedger({
        gateways: posts,
        readSql: `SELECT n FROM ${LEDGER_TABLE} WHERE id = 1`,
        writeSql: `UPDATE ${LEDGER_TABLE} SET n = GREATEST(n, ${placeholder}) WHERE id = 1`,
        tokens: engine === "postgres",
        valkey,
        minPhaseMs,
        enough: 20,
        phaseTimeoutMs: 60000,
        ttlMs: 60000,
      });
      return { engine, seconds: (performance.now() - startedAt) / 1000, ...ledger };
    } finally {
      for (const gateway of gateways) await gateway.stop();
    }
  });
}

export async function runCacheBench(work: CacheWork, step: Step): Promise<CacheResults> {
  const results: CacheResults = { hits: [], ledger: [] };
  const valkey = await startTestValkey();
  try {
    results.httpAlone = await measureHttpAlone(work, step);
    for (const { engine, benchUrl } of work.engines) {
      const networks = [{ network: "loopback", delayMs: 0 }, ...(work.networkDelayMs > 0 ? [{ network: `+${work.networkDelayMs} ms`, delayMs: work.networkDelayMs }] : [])];
      for (const { network, delayMs } of networks) {
        const forwarder = delayMs > 0 ? await startDelayedForwarder(Number(new URL(benchUrl).port || (engine === "postgres" ? 5432 : 3306)), delayMs) : undefined;
        try {
          const databaseUrl = forwarder ? forwarder.through(benchUrl) : benchUrl;
          for (const store of ["memory", "valkey"] as const) results.hits.push(await measureHits(work, engine, databaseUrl, network, store, valkey, step));
        } finally {
          await forwarder?.close();
        }
      }
      results.ledger.push(await runLedger(work, engine, benchUrl, valkey, step));
    }
  } finally {
    await valkey.close();
  }
  return results;
}
