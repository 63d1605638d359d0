/**
 * `npm run bench -- --profile` (or POOLGATE_BENCH_PROFILE=1): the steady load once per engine against
 * a gateway and the naive forwarder both started under `node --cpu-prof`, then where each one's CPU
 * went, by area. The profiles are saved beside bench.json for a closer look (Chrome DevTools opens
 * them). Profiling slows both servers; the shares, not the rates, are what this part is for.
 */
import { readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { benchUrlOf, prepareMysql, preparePostgres } from "./databases.js";
import { type ProfileSummary, summariseProfile } from "./cpu-profile.js";
import type { DriverSpec } from "./load-driver.js";
import { runJson, type Server, startGateway, startServer } from "./processes.js";
import type { BenchDialect, DriverResult } from "./workload.js";

export interface ProfiledServer {
  server: "gateway" | "naive";
  engine: BenchDialect;
  requests: number;
  throughput: number;
  summary: ProfileSummary;
  file: string;
}

export interface ProfileWork {
  adminUrl: string;
  mysqlAdminUrl: string;
  engines: BenchDialect[];
  poolSize: number;
  callers: number;
  durationMs: number;
  warmupMs: number;
  outDir: string;
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
  return step(`${engine}: ${which} under --cpu-prof`, (work.warmupMs + work.durationMs) / 1000 + 3, async () => {
    const server: Server =
      which === "gateway"
        ? await startGateway({ clusters: { default: { writerUrl: benchUrl } }, pool: { maxSize: work.poolSize } }, nodeOptions)
        : await startServer("./naive-server.js", [engine === "postgres" ? "pool" : "mysql-pool", benchUrl, String(work.poolSize)], {}, /^(\d+)\n/, nodeOptions);
    let result: DriverResult;
    try {
      const spec: DriverSpec = { url: server.url, path: "/v1/query", statement: "point", dialect: engine, callers: work.callers, durationMs: work.durationMs, warmupMs: work.warmupMs };
      result = await runJson<DriverResult>("./load-driver.js", [JSON.stringify(spec)]);
    } finally {
      // SIGTERM: both servers exit through process.exit, which is when V8 writes the profile.
      await server.stop();
    }
    const file = readdirSync(dir).find((name) => name.endsWith(".cpuprofile"));
    if (!file) throw new Error(`${which} wrote no CPU profile in ${dir}`);
    const requests = Math.round(result.requests + (result.throughput * work.warmupMs) / 1000);
    return { server: which, engine, requests, throughput: result.throughput, summary: summariseProfile(join(dir, file)), file: join(dir, file) };
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
    for (const which of ["gateway", "naive"] as const) profiled.push(await profileOne(work, engine, which, step));
  }
  return profiled;
}
