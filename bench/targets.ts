/**
 * The things being compared, behind one interface: give a target some work (a statement, callers,
 * a duration or a count per caller) and it answers with one driver result. Poolgate and the naive
 * server are driven over HTTP keep-alive from a separate process (load-driver, or the AWS SDK in
 * sdk-driver); the in-process pools, the new-connection-per-request callers and PgBouncer's clients
 * talk to the database themselves (direct-driver), so they pay no HTTP hop.
 */
import type { DirectSpec } from "./direct-driver.js";
import type { DriverSpec, Surface } from "./load-driver.js";
import { cpuMicros, cpuMicrosByThreads, databaseCpuMicros, runJson, type Server } from "./processes.js";
import type { TargetRow } from "./results.js";
import type { BenchDialect, BenchStatement, DriverResult } from "./workload.js";

export interface Work {
  statement: BenchStatement;
  dialect: BenchDialect;
  callers: number;
  durationMs?: number;
  requestsPerCaller?: number;
  warmupMs: number;
  /**
   * Before a server's first measured run, this long of the same load, not measured: a long-lived
   * server is measured with its code optimised (the gateway's JIT takes a few seconds of load to settle;
   * a 1 s warm-up left its first round paying for compilation).
   */
  serverWarmupMs?: number;
}

export type TargetResult = DriverResult & {
  cpuUsPerRequest?: number;
  cpuUsPerRequestByThreads?: number;
  /** The database servers' CPU per request over the same window (processes.ts: databaseCpuMicros). */
  databaseCpuUsPerRequest?: number;
};

export interface Target {
  name: string;
  role: TargetRow["role"];
  run(work: Work): Promise<TargetResult>;
}

/** The native API, the Data API, Neon's or PlanetScale's protocol (raw HTTP) of a gateway, or the naive server's one route. */
export function httpTarget(name: string, role: TargetRow["role"], server: Server, surface: Surface = "native"): Target {
  let warmed = false;
  return {
    name,
    role,
    run: async (work) => {
      if (!warmed && work.serverWarmupMs !== undefined && work.serverWarmupMs > 0) {
        const warmUp: DriverSpec = { url: server.url, path: "/v1/query", surface, statement: work.statement, dialect: work.dialect, callers: Math.min(work.callers, 32), durationMs: work.serverWarmupMs, warmupMs: 0 };
        await runJson<DriverResult>("./load-driver.js", [JSON.stringify(warmUp)]);
      }
      warmed = true;
      const pid = server.child.pid ?? 0;
      const before = cpuMicros(pid);
      const beforeByThreads = cpuMicrosByThreads(pid);
      const databaseBefore = databaseCpuMicros();
      const spec: DriverSpec = { ...work, url: server.url, path: "/v1/query", surface };
      const result = await runJson<DriverResult>("./load-driver.js", [JSON.stringify(spec)]);
      // The CPU window includes the warm-up, run at roughly the measured rate: count it in.
      const requests = Math.max(1, result.requests + (result.throughput * work.warmupMs) / 1000);
      return {
        ...result,
        cpuUsPerRequest: (cpuMicros(pid) - before) / requests,
        cpuUsPerRequestByThreads: (cpuMicrosByThreads(pid) - beforeByThreads) / requests,
        databaseCpuUsPerRequest: (databaseCpuMicros() - databaseBefore) / requests,
      };
    },
  };
}

/** The gateway's Data API through the unmodified @aws-sdk/client-rds-data (duration-based work only). */
export function sdkTarget(name: string, server: Server): Target {
  return {
    name,
    role: "poolgate",
    run: async (work) => {
      const pid = server.child.pid ?? 0;
      const before = cpuMicros(pid);
      const spec = { url: server.url, statement: work.statement, callers: work.callers, durationMs: work.durationMs ?? 0, warmupMs: work.warmupMs };
      // The AWS SDK warns about Node 20 on every start; the warning is not part of the measurement.
      const result = await runJson<DriverResult>("./sdk-driver.js", [JSON.stringify(spec)], ["--no-warnings"]);
      const warmupRequests = (result.throughput * work.warmupMs) / 1000;
      return { ...result, cpuUsPerRequest: (cpuMicros(pid) - before) / Math.max(1, result.requests + warmupRequests) };
    },
  };
}

/** Callers on the database (or PgBouncer) itself: one pool in their process, or a new connection per request. */
export function directTarget(
  name: string,
  role: TargetRow["role"],
  url: string,
  connection: DirectSpec["connection"],
  poolSize: number,
): Target {
  return {
    name,
    role,
    run: async (work) => {
      const spec: DirectSpec = { ...work, url, connection, poolSize };
      const databaseBefore = databaseCpuMicros();
      const ran = await runJson<TargetResult>("./direct-driver.js", [JSON.stringify(spec)]);
      const requests = Math.max(1, ran.requests + (ran.throughput * work.warmupMs) / 1000);
      const result = { ...ran, databaseCpuUsPerRequest: (databaseCpuMicros() - databaseBefore) / requests };
      // A new connection per request costs the database (a backend per connection), not this process.
      return connection === "pool" ? result : { ...result, cpuUsPerRequest: undefined };
    },
  };
}

/** Per-round ratios of poolgate's figure to each other target's, by `key` (higher is better for poolgate). */
function roundRatios(targets: Target[], byTarget: TargetResult[][], key: "throughput" | "p99"): Map<string, number[]> {
  const ratios = new Map<string, number[]>();
  const ours = targets.findIndex((target) => target.role === "poolgate");
  if (ours < 0) return ratios;
  for (const [i, target] of targets.entries()) {
    if (i === ours) continue;
    const list = (byTarget[ours] as TargetResult[]).map((mine, round) => {
      const theirs = (byTarget[i] as TargetResult[])[round] as TargetResult;
      return key === "throughput" ? mine.throughput / theirs.throughput : theirs.p99 / mine.p99;
    });
    ratios.set(target.name, list.filter(Number.isFinite));
  }
  return ratios;
}

/** The median of a list (the mean of the middle two for an even count); NaN for none. */
export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : ((sorted[Math.floor((sorted.length - 1) / 2)] as number) + (sorted[Math.ceil((sorted.length - 1) / 2)] as number)) / 2;
};

/** Stable: one more round moved no ratio's median by more than `tolerance` (relative). */
function ratiosStable(ratios: Map<string, number[]>, tolerance: number): boolean {
  for (const list of ratios.values()) {
    if (list.length < 3) return false;
    const before = median(list.slice(0, -1));
    const after = median(list);
    if (Math.abs(after - before) > tolerance * Math.abs(before)) return false;
  }
  return true;
}

export interface Stability {
  /** Extra rounds are run, up to `maxRounds`, until one more round moves no ratio's median by more than this. */
  tolerance: number;
  maxRounds: number;
}

/**
 * Runs `work` on every target, interleaved over `rounds` (so drift in the machine hits every target
 * alike; each round in another order) and then over more rounds, up to `stability.maxRounds`, until the ratios of poolgate to the
 * other targets are stable; keeps each target's median round by `key`, with errors and requests over
 * all rounds, and the spread of its ratio to poolgate.
 */
export async function measureRounds(
  targets: Target[],
  work: Work,
  rounds: number,
  key: "throughput" | "p99",
  step: (label: string, run: () => Promise<TargetResult>) => Promise<TargetResult>,
  stability: Stability = { tolerance: 0.03, maxRounds: rounds },
): Promise<TargetRow[]> {
  const byTarget: TargetResult[][] = targets.map(() => []);
  let round = 0;
  while (round < rounds || (round < stability.maxRounds && !ratiosStable(roundRatios(targets, byTarget, key), stability.tolerance))) {
    round++;
    const of = Math.max(rounds, round);
    // Each round starts one target further on, so no target always runs right after the same one (the
    // new-connection targets leave the database reaping thousands of sessions behind them).
    for (let k = 0; k < targets.length; k++) {
      const i = (k + round - 1) % targets.length;
      const target = targets[i] as Target;
      (byTarget[i] as TargetResult[]).push(await step(`round ${round}/${of}${round > rounds ? " (until stable)" : ""} · ${target.name}`, () => target.run(work)));
    }
  }
  const ratios = roundRatios(targets, byTarget, key);
  return targets.map((target, i) => {
    const results = byTarget[i] as TargetResult[];
    const sorted = [...results].sort((x, y) => (Number.isNaN(x[key]) ? 1 : Number.isNaN(y[key]) ? -1 : x[key] - y[key]));
    // With an even number of rounds, the less flattering of the two middle ones.
    const middle = sorted[key === "throughput" ? Math.floor((sorted.length - 1) / 2) : Math.ceil((sorted.length - 1) / 2)] as TargetResult;
    const ratio = ratios.get(target.name);
    return {
      ...middle,
      target: target.name,
      role: target.role,
      rounds: round,
      requestsAllRounds: results.reduce((sum, r) => sum + r.requests + r.errors, 0),
      errorsAllRounds: results.reduce((sum, r) => sum + r.errors, 0),
      firstError: results.find((r) => r.firstError)?.firstError,
      ...(ratio && ratio.length > 0 ? { ratioToPoolgate: { median: median(ratio), min: Math.min(...ratio), max: Math.max(...ratio) } } : {}),
    };
  });
}
