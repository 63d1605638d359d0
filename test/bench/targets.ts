/**
 * The things being compared, behind one interface: give a target some work (a statement, callers,
 * a duration or a count per caller) and it answers with one driver result. Poolgate and the naive
 * server are driven over HTTP keep-alive from a separate process (load-driver, or the AWS SDK in
 * sdk-driver); the in-process pools, the new-connection-per-request callers and PgBouncer's clients
 * talk to the database themselves (direct-driver), so they pay no HTTP hop.
 */
import type { DirectSpec } from "./direct-driver.js";
import type { DriverSpec } from "./load-driver.js";
import { cpuMicros, runJson, type Server } from "./processes.js";
import type { TargetRow } from "./results.js";
import type { BenchDialect, BenchStatement, DriverResult } from "./workload.js";

export interface Work {
  statement: BenchStatement;
  dialect: BenchDialect;
  callers: number;
  durationMs?: number;
  requestsPerCaller?: number;
  warmupMs: number;
}

export type TargetResult = DriverResult & { cpuUsPerRequest?: number };

export interface Target {
  name: string;
  role: TargetRow["role"];
  run(work: Work): Promise<TargetResult>;
}

/** The native API or the Data API (raw HTTP) of a gateway, or the naive server's one route. */
export function httpTarget(name: string, role: TargetRow["role"], server: Server, surface: "native" | "data-api" = "native"): Target {
  return {
    name,
    role,
    run: async (work) => {
      const pid = server.child.pid ?? 0;
      const before = cpuMicros(pid);
      const spec: DriverSpec = { ...work, url: server.url, path: "/v1/query", surface };
      const result = await runJson<DriverResult>("./load-driver.js", [JSON.stringify(spec)]);
      // The CPU window includes the warm-up, run at roughly the measured rate: count it in.
      const warmupRequests = (result.throughput * work.warmupMs) / 1000;
      return { ...result, cpuUsPerRequest: (cpuMicros(pid) - before) / Math.max(1, result.requests + warmupRequests) };
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
export function directTarget(name: string, role: TargetRow["role"], url: string, connection: DirectSpec["connection"], poolSize: number): Target {
  return {
    name,
    role,
    run: async (work) => {
      const spec: DirectSpec = { ...work, url, connection, poolSize };
      const result = await runJson<TargetResult>("./direct-driver.js", [JSON.stringify(spec)]);
      // A new connection per request costs the database (a backend per connection), not this process.
      return connection === "pool" ? result : { ...result, cpuUsPerRequest: undefined };
    },
  };
}

/**
 * Runs `work` on every target, interleaved over `rounds` (so drift in the machine hits every target
 * alike), and keeps each target's median round by `key`, with errors and requests over all rounds.
 */
export async function measureRounds(
  targets: Target[],
  work: Work,
  rounds: number,
  key: "throughput" | "p99",
  step: (label: string, run: () => Promise<TargetResult>) => Promise<TargetResult>,
): Promise<TargetRow[]> {
  const byTarget: TargetResult[][] = targets.map(() => []);
  for (let round = 1; round <= rounds; round++) {
    for (const [i, target] of targets.entries()) {
      (byTarget[i] as TargetResult[]).push(await step(`round ${round}/${rounds} · ${target.name}`, () => target.run(work)));
    }
  }
  return targets.map((target, i) => {
    const results = byTarget[i] as TargetResult[];
    const sorted = [...results].sort((x, y) => (Number.isNaN(x[key]) ? 1 : Number.isNaN(y[key]) ? -1 : x[key] - y[key]));
    // With an even number of rounds, the less flattering of the two middle ones.
    const middle = sorted[key === "throughput" ? Math.floor((sorted.length - 1) / 2) : Math.ceil((sorted.length - 1) / 2)] as TargetResult;
    return {
      ...middle,
      target: target.name,
      role: target.role,
      rounds,
      requestsAllRounds: results.reduce((sum, r) => sum + r.requests + r.errors, 0),
      errorsAllRounds: results.reduce((sum, r) => sum + r.errors, 0),
      firstError: results.find((r) => r.firstError)?.firstError,
    };
  });
}
