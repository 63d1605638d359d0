/**
 * PgBouncer in transaction mode in front of the local PostgreSQL, as Lambda + PgBouncer (or an
 * RDS-Proxy-like) setups run it: started from the machine's binary in a temporary directory on a free
 * loopback port, the same server pool size as the gateway's, trust auth. PgBouncer refuses to run as
 * root, so as root it runs as the `postgres` user (like test/support/pg-topology.ts does for postgres).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { unusedPort } from "../test/support/ports.js";
import { runningAsRoot, tempDirFor } from "../test/support/server-group.js";
import { onCleanup, stopChild } from "./processes.js";

export interface PgBouncer {
  /** The URL of `database` through PgBouncer. */
  url: string;
  version: string;
  stop(): Promise<void>;
}

/** The pgbouncer binary: POOLGATE_BENCH_PGBOUNCER, else /usr/sbin/pgbouncer, else on PATH; undefined when absent. */
export function findPgBouncer(override: string | undefined): string | undefined {
  if (override) return existsSync(override) ? override : undefined;
  if (existsSync("/usr/sbin/pgbouncer")) return "/usr/sbin/pgbouncer";
  try {
    return execFileSync("sh", ["-c", "command -v pgbouncer"], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
}

export interface PgBouncerOptions {
  binary: string;
  /** The PostgreSQL database it fronts (postgres://user@host:port/database, trust auth). */
  backendUrl: string;
  poolSize: number;
  maxClients: number;
}

function iniFile(dir: string, port: number, options: PgBouncerOptions): string {
  const backend = new URL(options.backendUrl);
  const database = backend.pathname.slice(1);
  const user = decodeURIComponent(backend.username) || "postgres";
  return [
    "[databases]",
    `${database} = host=${backend.hostname} port=${backend.port || 5432} dbname=${database} user=${user}`,
    "[pgbouncer]",
    "listen_addr = 127.0.0.1",
    `listen_port = ${port}`,
    "unix_socket_dir =",
    "auth_type = trust",
    `auth_file = ${join(dir, "userlist.txt")}`,
    "pool_mode = transaction",
    `default_pool_size = ${options.poolSize}`,
    `max_db_connections = ${options.poolSize}`,
    "reserve_pool_size = 0",
    `max_client_conn = ${options.maxClients}`,
    `logfile = ${join(dir, "pgbouncer.log")}`,
    `pidfile = ${join(dir, "pgbouncer.pid")}`,
    // A client waits for a server connection as long as the gateway's callers may (its acquire timeout).
    "query_wait_timeout = 120",
    "log_connections = 0",
    "log_disconnections = 0",
    "",
  ].join("\n");
}

async function waitUntilServing(url: string, child: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + 15000;
  let last = "";
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.query("select 1");
      return;
    } catch (err) {
      last = (err as Error).message;
    } finally {
      await client.end().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const log = existsSync(logFile) ? readFileSync(logFile, "utf8").slice(-1500) : "";
  throw new Error(`pgbouncer did not start serving (${last}); its log:\n${log}`);
}

/** Sends a signal (0: only checks the process exists); false when the process is gone. */
function signal(pid: number, name: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false;
  }
}

export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const dir = tempDirFor("postgres", "poolgate-bench-pgbouncer-");
  const port = await unusedPort();
  const backend = new URL(options.backendUrl);
  const user = decodeURIComponent(backend.username) || "postgres";
  writeFileSync(join(dir, "userlist.txt"), `"${user}" ""\n`);
  const ini = join(dir, "pgbouncer.ini");
  writeFileSync(ini, iniFile(dir, port, options));
  const version = execFileSync(options.binary, ["--version"], { encoding: "utf8" }).split("\n")[0]?.trim() ?? "PgBouncer";
  // One descriptor per client and server connection: raise the soft limit (1024 for most users) to fit max_client_conn.
  const withFiles = ["sh", "-c", 'ulimit -n "$1" 2>/dev/null; exec "$2" "$3"', "sh", String(options.maxClients + 200), options.binary, ini];
  const [command, ...args] = runningAsRoot ? ["runuser", "-u", "postgres", "--", ...withFiles] : withFiles;
  const child = spawn(command as string, args, { stdio: ["ignore", "ignore", "pipe"] });
  const pidFile = join(dir, "pgbouncer.pid");
  const stop = async () => {
    // SIGTERM is PgBouncer's immediate shutdown; signal it directly too in case runuser does not forward it.
    const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8").trim()) : 0;
    if (pid > 0) signal(pid, "SIGTERM");
    await stopChild(child);
    for (let i = 0; pid > 0 && signal(pid, 0) && i < 100; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    rmSync(dir, { recursive: true, force: true });
  };
  const deregister = onCleanup(stop);
  const url = new URL(options.backendUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  try {
    await waitUntilServing(url.toString(), child, join(dir, "pgbouncer.log"));
  } catch (err) {
    await stop();
    deregister();
    throw err;
  }
  return {
    url: url.toString(),
    version,
    stop: async () => {
      await stop();
      deregister();
    },
  };
}
