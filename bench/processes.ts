/**
 * The bench's child processes: servers it starts (the gateway, the naive server) and drivers it runs
 * to completion. Every start registers how to stop it, so an error or Ctrl-C leaves nothing running.
 * Children's stderr is captured (not inherited), so their warnings do not tear the progress bar; it
 * is shown when a child fails.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The bench runs compiled JavaScript (npm run build), like production: no transpiler in the loop. */
export const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

const cleanups = new Set<() => Promise<void>>();

/** Registers a stop to run at exit (or on Ctrl-C); returns its deregistration. */
export function onCleanup(stop: () => Promise<void>): () => void {
  cleanups.add(stop);
  return () => cleanups.delete(stop);
}

/** Runs every registered stop, newest first; errors are reported, not thrown. */
export async function cleanupAll(): Promise<void> {
  for (const stop of [...cleanups].reverse()) {
    cleanups.delete(stop);
    await stop().catch((err: unknown) => process.stderr.write(`bench: cleanup failed: ${String(err)}\n`));
  }
}

let interrupted = false;
/** Ctrl-C or SIGTERM: stop what the bench started, then exit 130. A second signal exits at once. */
export function exitCleanlyOnSignals(beforeExit: () => void): void {
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(130);
    interrupted = true;
    beforeExit();
    process.stderr.write(`\nbench: ${signal}, stopping everything it started...\n`);
    void cleanupAll().finally(() => process.exit(130));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
}

function tail(text: string, chars = 2000): string {
  return text.length > chars ? `...${text.slice(-chars)}` : text;
}

function capture(child: ChildProcess): { stdout: () => string; stderr: () => string } {
  let out = "";
  let err = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    out = tail(out + chunk.toString(), 100000);
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    err = tail(err + chunk.toString(), 8000);
  });
  return { stdout: () => out, stderr: () => err };
}

export function stopChild(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const killer = setTimeout(() => child.kill("SIGKILL"), 10000);
    child.once("exit", () => {
      clearTimeout(killer);
      resolve();
    });
    child.kill(signal);
  });
}

/** Runs a compiled bench script to completion and parses the last line it prints as JSON. */
export function runJson<T>(script: string, args: string[], nodeOptions: string[] = []): Promise<T> {
  const child = spawn(process.execPath, [...nodeOptions, here(script), ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const deregister = onCleanup(() => stopChild(child, "SIGKILL"));
  const output = capture(child);
  return new Promise((resolve, reject) => {
    child.on("exit", (code) => {
      deregister();
      const last = output.stdout().trim().split("\n").pop() ?? "";
      if (code === 0) {
        try {
          return resolve(JSON.parse(last) as T);
        } catch {
          return reject(new Error(`${script} printed no JSON result: ${tail(last, 300)}`));
        }
      }
      reject(new Error(`${script} exited ${code}: ${tail(output.stderr())}`));
    });
  });
}

/** What a server is started under (startServer). */
export interface Launch {
  command?: string[];
  readyMs?: number;
}

export interface Server {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts a compiled script as a server and waits for `ready` (its first group: a URL or a port) on
 * stdout. `env` is laid over ours; an undefined value removes the variable. A launcher (a command and
 * its arguments, valgrind say) runs node under it, and the child is then the launcher's process; one
 * that slows node down needs a longer wait for `ready` than the 60 s default.
 */
export async function startServer(
  script: string,
  args: string[],
  env: Record<string, string | undefined>,
  ready: RegExp,
  nodeOptions: string[] = [],
  launch: Launch = {},
): Promise<Server> {
  const launcher = launch.command ?? [];
  const readyMs = launch.readyMs ?? 60000;
  const merged = Object.fromEntries(Object.entries({ ...process.env, ...env }).filter(([, value]) => value !== undefined));
  const [command = process.execPath, ...launcherArgs] = launcher.length > 0 ? [...launcher, process.execPath] : [];
  const child = spawn(command, [...launcherArgs, ...nodeOptions, here(script), ...args], { env: merged, stdio: ["ignore", "pipe", "pipe"] });
  const stop = () => stopChild(child);
  const deregister = onCleanup(stop);
  const output = capture(child);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} not ready after ${readyMs / 1000} s: ${tail(output.stdout() + output.stderr())}`)), readyMs);
    child.stdout?.on("data", () => {
      const match = ready.exec(output.stdout());
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1].startsWith("http") ? match[1] : `http://127.0.0.1:${match[1]}`);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited ${code}: ${tail(output.stdout() + output.stderr())}`));
    });
  }).catch(async (err: unknown) => {
    await stop();
    deregister();
    throw err;
  });
  return {
    child,
    url,
    stop: async () => {
      await stop();
      deregister();
    },
  };
}

/**
 * The gateway from dist/, configured by `config` (a POOLGATE_CONFIG_JSON document). HOST is pinned to
 * loopback: with no caller authentication configured the gateway refuses any other listen address,
 * and a HOST in the caller's environment must not turn the bench into a config error.
 */
export function startGateway(config: object, nodeOptions: string[] = [], launch: Launch = {}): Promise<Server> {
  const env = { POOLGATE_CONFIG_JSON: JSON.stringify(config), HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info" };
  const scrubbed = { POOLGATE_CONFIG: undefined, POOLGATE_WRITER_URL: undefined, POOLGATE_READER_URLS: undefined };
  return startServer("../gateway/main.js", [], { ...scrubbed, ...env }, /listening on (http:\/\/[\d.:]+)/, nodeOptions, launch);
}

/** User + system CPU (µs) from a /proc stat line (the fields after the command name); with `reaped`, its ended children's too. */
function statMicros(path: string, reaped = false): number {
  const fields = readFileSync(path, "utf8").split(") ")[1]?.split(" ") ?? [];
  let ticks = Number(fields[11]) + Number(fields[12]);
  if (reaped) ticks += Number(fields[13]) + Number(fields[14]);
  return (ticks * 1e6) / 100;
}

/** The database servers' process names: PostgreSQL's postmaster and backends, MariaDB, MySQL. */
const DATABASE_COMMANDS = new Set(["postgres", "mariadbd", "mysqld"]);

/**
 * CPU time (µs) every database server process on the machine has used so far, with the children they
 * reaped: PostgreSQL's backends (one per connection; an ended one's time moves into the postmaster's
 * reaped-children figures, so a window counts it either way), MariaDB's threads. The bench's own servers
 * are the only busy ones while a target runs, so a window's difference is that target's database cost.
 */
export function databaseCpuMicros(): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const command = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      if (DATABASE_COMMANDS.has(command)) total += statMicros(`/proc/${entry}/stat`, true);
    } catch {
      // The process ended while we read.
    }
  }
  return total;
}

/** CPU time (µs) a process has used so far, every thread of it, from /proc/<pid>/stat (user + system). */
export function cpuMicros(pid: number): number {
  return statMicros(`/proc/${pid}/stat`);
}

/**
 * The same, summed over /proc/<pid>/task/<tid>/stat: a cross-check of cpuMicros (threads that ended
 * between two readings are missing from the second, so over a window it can only read lower).
 */
export function cpuMicrosByThreads(pid: number): number {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += statMicros(`/proc/${pid}/task/${tid}/stat`);
    } catch {
      // The thread ended while we read.
    }
  }
  return total;
}
