/**
 * The instruction ledger (POOLGATE_BENCH_ONLY=instructions): the gateway's and the naive forwarder's
 * cost per request counted in CPU instructions, not seconds. Each server runs under valgrind's
 * callgrind, which counts every instruction it executes in user space, whatever else the machine is
 * doing: on a shared 2-core VM, where CPU time for identical work moves by ±6% between runs, this is the
 * figure that can show a change of a few per cent. The kernel's work (system calls) is not counted;
 * the profile part counts those per request, and they are the same for both servers.
 *
 * The steady load's point select, from 8 callers, first as a warm-up (callgrind runs code ~50× slower,
 * so the JIT needs requests, not seconds, to settle), then in windows of equal requests, each dumped
 * apart. A window's count is divided by its requests. The main thread (JavaScript, the event loop, the
 * scavenger's share on it) is reported apart from all threads (V8 compiles optimised code and marks
 * the heap on helper threads, in bursts that land in one window or the next): the median of the last
 * windows is kept. Where the gateway's main thread spends more than the naive forwarder's is listed by
 * function (in the kept window of the median count), generated code named through the perf map
 * `node --perf-basic-prof` writes.
 *
 * Instructions are not time: callgrind also simulates the first-level caches and the branch predictor
 * (--cache-sim, --branch-sim), and the ledger reports the main thread's misses per request beside its
 * instructions. Where the two servers run about as many instructions but one takes longer, these
 * counts show whether its code and data miss the caches and the predictor more.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { selfInstructions, summaryEvents, totalInstructions } from "./callgrind-profile.js";
import { benchUrlOf, prepareMysql, preparePostgres } from "./databases.js";
import { runJson, type Server, startGateway, startServer } from "./processes.js";
import { median } from "./targets.js";
import type { BenchDialect, DriverResult } from "./workload.js";

/** Requests before the first window, the windows, and each window's requests (split over the callers). */
export const LEDGER_SHAPE = { callers: 8, warmupRequests: 6000, windows: 5, windowRequests: 2000, windowsKept: 3 } as const;

/** About 50 requests a second under callgrind with its cache and branch simulation on a 2-core VM, plus a minute and a half to start. */
export const LEDGER_ESTIMATE_S = Math.round((LEDGER_SHAPE.warmupRequests + LEDGER_SHAPE.windows * LEDGER_SHAPE.windowRequests) / 50) + 90;

/**
 * What the main thread's instructions cost beyond their count, per request, as callgrind's simulated
 * machine sees it: first-level cache misses (instructions; data read and written) and mispredicted
 * branches (conditional; indirect: calls and jumps through a register, as V8's dispatch makes them).
 * Two servers running about as many instructions can take very different times when one of them
 * misses the caches and the predictor more: this says whether it does, and by how much.
 */
export interface SimulatedMisses {
  instructionCache: number;
  dataReads: number;
  dataWrites: number;
  conditionalBranches: number;
  indirectBranches: number;
}

export interface InstructionWindow {
  mainPerRequest: number;
  allThreadsPerRequest: number;
  /** The main thread's, per request. */
  misses: SimulatedMisses;
}

/** Each kind of miss and the callgrind event that counts it. */
const MISS_EVENTS = { instructionCache: "I1mr", dataReads: "D1mr", dataWrites: "D1mw", conditionalBranches: "Bcm", indirectBranches: "Bim" } as const;
type MissKind = keyof typeof MISS_EVENTS;
const MISS_KINDS = Object.keys(MISS_EVENTS) as MissKind[];

function missesOf(events: Record<string, number>, requests: number): SimulatedMisses {
  return Object.fromEntries(MISS_KINDS.map((kind) => [kind, (events[MISS_EVENTS[kind]] ?? 0) / requests])) as Record<MissKind, number>;
}

function medianMisses(windows: readonly InstructionWindow[]): SimulatedMisses {
  return Object.fromEntries(MISS_KINDS.map((kind) => [kind, median(windows.map((w) => w.misses[kind]))])) as Record<MissKind, number>;
}

export interface InstructionLedger {
  server: "gateway" | "naive";
  engine: BenchDialect;
  windows: InstructionWindow[];
  /** Medians over the last LEDGER_SHAPE.windowsKept windows. */
  mainPerRequest: number;
  allThreadsPerRequest: number;
  misses: SimulatedMisses;
  /** The main thread's own instructions per request by function, in the kept window of the median count (the largest first). */
  functions: { name: string; perRequest: number }[];
  /** Where that window's callgrind files and the perf map were kept. */
  dir: string;
  errors: number;
}

export const valgrindInstalled = (): boolean => spawnSync("valgrind", ["--version"]).status === 0 && spawnSync("callgrind_control", ["-h"]).status === 0;

/**
 * Valgrind names its control pipes after the HOST variable of the process it runs, and
 * callgrind_control finds them by its own: both get this one.
 */
const CONTROL_HOST = "127.0.0.1";

function control(pid: number, command: "-z" | "-d"): void {
  const done = spawnSync("callgrind_control", [command, String(pid)], { env: { ...process.env, HOST: CONTROL_HOST }, encoding: "utf8" });
  if (done.status !== 0) throw new Error(`callgrind_control ${command} ${pid} failed: ${done.stderr || done.stdout}`);
}

async function countOne(engine: BenchDialect, which: InstructionLedger["server"], benchUrl: string, poolSize: number, outDir: string): Promise<InstructionLedger> {
  const dir = resolve(outDir, "instructions", `${engine}-${which}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const command = ["valgrind", "--tool=callgrind", "--smc-check=all-non-file", "--dump-instr=no", "--cache-sim=yes", "--branch-sim=yes", "--separate-threads=yes", `--callgrind-out-file=${join(dir, "callgrind.%p")}`];
  const nodeOptions = ["--perf-basic-prof"];
  // Loading the gateway's modules alone takes a minute or more under callgrind.
  const launch = { command, readyMs: 600_000 };
  const server: Server =
    which === "gateway"
      ? await startGateway({ clusters: { default: { writerUrl: benchUrl } }, pool: { maxSize: poolSize } }, nodeOptions, launch)
      : await startServer("./naive-server.js", [engine === "postgres" ? "pool" : "mysql-pool", benchUrl, String(poolSize)], { HOST: CONTROL_HOST }, /^(\d+)\n/, nodeOptions, launch);
  const pid = server.child.pid ?? 0;
  const load = (requests: number) =>
    runJson<DriverResult>("./load-driver.js", [
      JSON.stringify({ url: server.url, path: "/v1/query", statement: "point", dialect: engine, callers: LEDGER_SHAPE.callers, requestsPerCaller: requests / LEDGER_SHAPE.callers, warmupMs: 0 }),
    ]);
  const windows: InstructionWindow[] = [];
  let errors = 0;
  const perfMap = `/tmp/perf-${pid}.map`;
  let functions: InstructionLedger["functions"];
  try {
    try {
      await load(LEDGER_SHAPE.warmupRequests);
      control(pid, "-z");
      for (let w = 1; w <= LEDGER_SHAPE.windows; w++) {
        const result = await load(LEDGER_SHAPE.windowRequests);
        errors += result.errors;
        control(pid, "-d");
        const requests = result.requests + result.errors;
        const files = readdirSync(dir).filter((name) => name.startsWith(`callgrind.${pid}.${w}-`));
        const main = files.find((name) => name.endsWith("-01"));
        if (!main) throw new Error(`callgrind wrote no main-thread dump for window ${w} in ${dir}`);
        const mainEvents = summaryEvents(join(dir, main));
        windows.push({
          mainPerRequest: (mainEvents.Ir ?? 0) / requests,
          allThreadsPerRequest: files.reduce((sum, name) => sum + totalInstructions(join(dir, name)), 0) / requests,
          misses: missesOf(mainEvents, requests),
        });
      }
    } finally {
      await server.stop();
    }
    // The functions of the kept window whose count is the median: a window where V8 threw optimised
    // code away (and ran it unoptimised until it was compiled again) would list that, not the steady cost.
    const first = LEDGER_SHAPE.windows - LEDGER_SHAPE.windowsKept;
    const byCount = windows.slice(first).map((w, i) => ({ at: first + i + 1, main: w.mainPerRequest }));
    byCount.sort((a, b) => a.main - b.main);
    const chosen = (byCount[byCount.length >> 1] as { at: number }).at;
    functions = [...selfInstructions(join(dir, `callgrind.${pid}.${chosen}-01`), perfMap)]
      .map(([name, instructions]) => ({ name, perRequest: instructions / LEDGER_SHAPE.windowRequests }))
      .sort((a, b) => b.perRequest - a.perRequest);
    // Keep that window's dumps and the map that names their code; the rest is gigabytes of nothing new.
    for (const name of readdirSync(dir)) if (!name.startsWith(`callgrind.${pid}.${chosen}-`)) rmSync(join(dir, name), { force: true });
    copyFileSync(perfMap, join(dir, "perf.map"));
  } finally {
    // Node writes the map to /tmp; nothing of the run stays there, whatever happened.
    rmSync(perfMap, { force: true });
  }
  const kept = windows.slice(-LEDGER_SHAPE.windowsKept);
  return {
    server: which,
    engine,
    windows,
    mainPerRequest: median(kept.map((w) => w.mainPerRequest)),
    allThreadsPerRequest: median(kept.map((w) => w.allThreadsPerRequest)),
    misses: medianMisses(kept),
    functions,
    dir,
    errors,
  };
}

export interface LedgerWork {
  adminUrl: string;
  mysqlAdminUrl: string;
  poolSize: number;
  outDir: string;
}

export async function runInstructionLedger(
  work: LedgerWork,
  step: (label: string, estimateS: number, run: () => Promise<InstructionLedger>) => Promise<InstructionLedger>,
): Promise<InstructionLedger[]> {
  const ledgers: InstructionLedger[] = [];
  for (const engine of ["postgres", "mysql"] as const) {
    const benchUrl = benchUrlOf(engine === "postgres" ? work.adminUrl : work.mysqlAdminUrl);
    if (engine === "postgres") await preparePostgres(work.adminUrl);
    else await prepareMysql(work.mysqlAdminUrl);
    for (const which of ["gateway", "naive"] as const) {
      ledgers.push(await step(`${engine}: ${which} under callgrind`, LEDGER_ESTIMATE_S, () => countOne(engine, which, benchUrl, work.poolSize, work.outDir)));
    }
  }
  return ledgers;
}
