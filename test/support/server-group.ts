/**
 * What the database topology harnesses share: a temporary directory owned by the server's system user
 * (servers refuse to run as root), and the start-or-clean-up / destroy lifecycle of a primary and its
 * replicas.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "./wait-for.js";

export const runningAsRoot = process.getuid?.() === 0;

/** A new temporary directory that `user` may write into (chowned to it when we are root). */
export function tempDirFor(user: string, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  if (runningAsRoot) chownSync(dir, idOf("-u", user), idOf("-g", user));
  return dir;
}

function idOf(flag: "-u" | "-g", user: string): number {
  return Number(execFileSync("id", [flag, user], { encoding: "utf8" }).trim());
}

export interface Stoppable {
  stop(mode: "immediate"): Promise<void>;
}

/**
 * What the routing, stale-DNS and topology suites ask of a server in either engine's topology; each
 * engine's instance has more (freeze, rejoin, base backups).
 */
export interface ReplicatedInstance {
  readonly name: string;
  readonly port: number;
  /** How the gateway logs in (PostgreSQL: the superuser; MariaDB: `app`, to which read_only applies). */
  url(): string;
  /** Runs SQL as an administrator, on a session of its own. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Graceful shutdown, or a crash. */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  /** Turns a replica into a primary that takes writes. */
  promote(): Promise<void>;
  /** Replicates from another primary (after a promotion). */
  follow(primary: this): Promise<void>;
  /** Stops and restarts applying what the primary sends (it keeps receiving it). */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
}

export interface ServerGroup<I> {
  primary: I;
  replicas: I[];
  all(): I[];
  /** Crashes every server and removes its files. */
  destroy(): Promise<void>;
}

/**
 * Runs `start`, which pushes each server into `instances` as it comes up (the primary first); if it
 * fails, whatever started is stopped and the directory removed before the error goes on.
 */
export async function startServerGroup<I extends Stoppable>(root: string, start: (instances: I[]) => Promise<void>): Promise<ServerGroup<I>> {
  const instances: I[] = [];
  const destroy = async () => {
    for (const instance of instances) await instance.stop("immediate");
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await start(instances);
  } catch (err) {
    await destroy();
    throw err;
  }
  const [primary, ...replicas] = instances as [I, ...I[]];
  return { primary, replicas, all: () => instances, destroy };
}

/**
 * Sends SIGSTOP to the processes and resolves once every thread of each is stopped. The signal alone
 * is not enough: a multi-threaded server stops only when the thread the kernel picked handles it, and
 * on a busy machine another thread may still answer a query meanwhile.
 */
export async function freezeProcesses(pids: readonly number[]): Promise<void> {
  for (const pid of pids) process.kill(pid, "SIGSTOP");
  await waitFor(() => pids.every(allThreadsStopped), 10000, `processes ${pids.join(", ")} to stop`, 5);
}

/** Every thread of `pid` is in state T (stopped), per /proc; a process that is gone counts as stopped. */
function allThreadsStopped(pid: number): boolean {
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return true;
  }
  return threads.every((thread) => {
    try {
      // The state follows the command name, which is in parentheses and may hold spaces.
      const stat = readFileSync(`/proc/${pid}/task/${thread}/stat`, "utf8");
      return stat.slice(stat.lastIndexOf(")") + 2).startsWith("T");
    } catch {
      return true;
    }
  });
}
