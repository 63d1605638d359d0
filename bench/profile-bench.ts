/**
 * `npm run bench -- --profile` (or POOLGATE_BENCH_PROFILE=1): the steady load once per engine against
 * a gateway, the same gateway answering result-cache hits, and the naive forwarder, all started under
 * `node --cpu-prof`, then where each one's CPU went, by area. The profiles are saved beside bench.json for a closer look (Chrome DevTools opens
 * them). Each server first gets a warm-up run of the load (the JIT settles), then the measured run,
 * which alone the summary covers, beside the process's CPU over it from /proc (the profiler samples
 * wall time, so its "busy" counts time waiting inside system calls too). Profiling
 * slows both servers; the shares, not the rates, are what this part is for. Where
 * strace is installed, a second run of the load counts each server's system calls per request (socket
 * writes and reads, epoll wake-ups); those samples come after the measured window's.
 */
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { benchUrlOf, prepareMysql, preparePostgres } from "./databases.js";
import { type ProfileSummary, summariseProfile } from "./cpu-profile.js";
import type { DriverSpec } from "./load-driver.js";
import { cpuMicros, runJson, type Server, startGateway, startServer } from "./processes.js";
import type { BenchDialect, DriverResult } from "./workload.js";

export interface ProfiledServer {
  /** "gateway-hits": the gateway answering the same read from its result cache (memory store), every call a hit. */
  server: "gateway" | "naive" | "gateway-hits";
  engine: BenchDialect;
  requests: number;
  throughput: number;
  /** The server's CPU (user + system of all its threads, from /proc) per request over the profiled window. */
  cpuUsPerRequest: number;
  summary: ProfileSummary;
  file: string;
  /** System calls per request (strace -c over a separate run of the same load), when strace is installed. */
  syscallsPerRequest?: Record<string, number>;
}

export interface ProfileWork {
  adminUrl: string;
  mysqlAdminUrl: string;
  engines: BenchDialect[];
  poolSize: number;
  callers: number;
  durationMs: number;
  warmupMs: number;
  /** Load before the profiled window, left out of the summary (targets.ts: Work.serverWarmupMs). */
  serverWarmupMs: number;
  outDir: string;
}

const straceInstalled = () => spawnSync("strace", ["-V"]).status === 0;

/** The load once more with `strace -c -f` attached to the server: system calls (and epoll wake-ups) per request. */
async function countSyscalls(server: Server, spec: DriverSpec): Promise<Record<string, number>> {
  const out = join(tmpdir(), `poolgate-strace-${process.pid}-${Date.now()}`);
  const strace = spawn("strace", ["-c", "-f", "-o", out, "-p", String(server.child.pid)], { stdio: "ignore" });
  const exited = new Promise<void>((resolve) => strace.once("exit", () => resolve()));
  await new Promise((resolve) => setTimeout(resolve, 300));
  const result = await runJson<DriverResult>("./load-driver.js", [JSON.stringify({ ...spec, warmupMs: 0 })]);
  strace.kill("SIGINT");
  await exited;
  const counts: Record<string, number> = {};
  for (const line of readFileSync(out, "utf8").split("\n")) {
    const fields = line.trim().split(/\s+/);
    const calls = Number(fields[3]);
    const name = fields[fields.length - 1];
    if (fields.length >= 5 && Number.isFinite(calls) && name && name !== "total" && /^[a-z_0-9]+$/.test(name)) counts[name] = calls / Math.max(1, result.requests);
  }
  rmSync(out, { force: true });
  return Object.fromEntries(Object.entries(counts).filter(([, perRequest]) => perRequest >= 0.01).sort((a, b) => b[1] - a[1]));
}

async function profileOne(
  work: ProfileWork,
  engine: BenchDialect,
  which: ProfiledServer["server"],
  step: (label: string, estimateS: number, run: () => Promise<ProfiledServer>) => Promise<ProfiledServer>,
): Promise<ProfiledServer> {
  const benchUrl = benchUrlOf(engine === "postgres" ? work.adminUrl : work.mysqlAdminUrl);
  const dir = resolve(work.outDir, "profiles", `${engine}-${which}`);
  rmSync(dir, { recursive: true, force: true });
  const nodeOptions = ["--cpu-prof", `--cpu-prof-dir=${dir}`];
  const start = (options: string[]): Promise<Server> =>
    which !== "naive"
      ? startGateway({ clusters: { default: { writerUrl: benchUrl } }, pool: { maxSize: work.poolSize } }, options)
      : startServer("./naive-server.js", [engine === "postgres" ? "pool" : "mysql-pool", benchUrl, String(work.poolSize)], {}, /^(\d+)\n/, options);
  // Hits read one row again and again (the cache part's "hot" read), every call answered from the cache.
  const hits = which === "gateway-hits" ? { statement: "hot" as const, cache: { ttlMs: 3_600_000 } } : { statement: "point" as const };
  const spec = (url: string): DriverSpec => ({ url, path: "/v1/query", ...hits, dialect: engine, callers: work.callers, durationMs: work.durationMs, warmupMs: work.warmupMs });
  return step(`${engine}: ${which} under --cpu-prof`, (work.warmupMs + work.serverWarmupMs + work.durationMs) / 1000 + 3, async () => {
    const server = await start(nodeOptions);
    let result: DriverResult;
    let cpuUsPerRequest: number;
    try {
      // The warm-up (the JIT compiling) runs first, on its own; the profile's summary and the CPU
      // figure cover the measured run only.
      await runJson<DriverResult>("./load-driver.js", [JSON.stringify({ ...spec(server.url), durationMs: work.warmupMs + work.serverWarmupMs, warmupMs: 0 })]);
      const cpuBefore = cpuMicros(server.child.pid ?? 0);
      result = await runJson<DriverResult>("./load-driver.js", [JSON.stringify({ ...spec(server.url), warmupMs: 0 })]);
      cpuUsPerRequest = (cpuMicros(server.child.pid ?? 0) - cpuBefore) / Math.max(1, result.requests + result.errors);
    } finally {
      // SIGTERM: both servers exit through process.exit, which is when V8 writes the profile.
      await server.stop();
    }
    const file = readdirSync(dir).find((name) => name.endsWith(".cpuprofile"));
    if (!file) throw new Error(`${which} wrote no CPU profile in ${dir}`);
    const requests = result.requests;
    const summary = summariseProfile(join(dir, file), 12, result.elapsedMs);
    // System calls are counted on a server of its own, not profiled, so neither measure disturbs the other.
    let syscallsPerRequest: Record<string, number> | undefined;
    if (straceInstalled()) {
      const counted = await start([]);
      try {
        await runJson<DriverResult>("./load-driver.js", [JSON.stringify({ ...spec(counted.url), durationMs: 500 })]);
        syscallsPerRequest = await countSyscalls(counted, { ...spec(counted.url), durationMs: Math.min(2000, work.durationMs) });
      } finally {
        await counted.stop();
      }
    }
    return { server: which, engine, requests, throughput: result.throughput, cpuUsPerRequest, summary, file: join(dir, file), ...(syscallsPerRequest ? { syscallsPerRequest } : {}) };
  });
}

export async function runProfiles(
  work: ProfileWork,
  step: (label: string, estimateS: number, run: () => Promise<ProfiledServer>) => Promise<ProfiledServer>,
): Promise<ProfiledServer[]> {
  const profiled: ProfiledServer[] = [];
  for (const engine of work.engines) {
    if (engine === "postgres") await preparePostgres(work.adminUrl);
    else await prepareMysql(work.mysqlAdminUrl);
    for (const which of ["gateway", "gateway-hits", "naive"] as const) profiled.push(await profileOne(work, engine, which, step));
  }
  return profiled;
}
