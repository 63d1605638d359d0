/**
 * One embedded PostgreSQL per data directory. PGlite keeps no lock of its own, and two of them
 * writing the same files (a second `npm start` in the same folder) would corrupt them, so the
 * directory holds `poolgate.lock`: created exclusively, naming the processes that use the files (the
 * gateway and its PGlite server). A lock whose processes are all gone (a crash, a container restarted
 * with the same pids) is taken over; one with a live process is refused with a clear error.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";

export const LOCK_FILE = "poolgate.lock";

/** Directories this process has locked: its own pid in a lock file means "in use" only for these. */
const heldHere = new Set<string>();

export interface DataDirLock {
  /** Records another process that uses the files (the PGlite server), so that it is waited for too. */
  addProcess(pid: number): void;
  /** Removes the lock, if it is still ours. */
  release(): void;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function pidsIn(path: string): number[] {
  try {
    return readFileSync(path, "utf8")
      .split(/\s+/)
      .map(Number)
      .filter((pid) => Number.isInteger(pid) && pid > 0);
  } catch {
    return [];
  }
}

function inUse(dataDir: string, pids: readonly number[]): number | undefined {
  if (heldHere.has(dataDir)) return process.pid;
  // Our own pid in a lock we never took: a previous process (a restarted container) had it.
  return pids.find((pid) => pid !== process.pid && isAlive(pid));
}

function refusal(dataDir: string, pid: number): Error {
  return new Error(
    `the embedded database in ${dataDir} is in use by process ${pid} (another poolgate started there): stop it, or give this one ` +
      `its own directory with POOLGATE_DATA_DIR (embedded.dataDir). Two servers on the same files would corrupt them.`,
  );
}

/** Takes the directory's lock, or throws naming the process that holds it. `dataDir` must exist. */
export function lockDataDir(dataDir: string): DataDirLock {
  const path = join(dataDir, LOCK_FILE);
  let fd: number | undefined;
  for (let attempt = 0; fd === undefined; attempt++) {
    try {
      fd = openSync(path, "wx");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = inUse(dataDir, pidsIn(path));
      // A second EEXIST after removing a stale lock: another process took it in between.
      if (holder !== undefined || attempt > 0) throw refusal(dataDir, holder ?? (pidsIn(path)[0] ?? 0));
      unlinkSync(path);
    }
  }
  const pids = [process.pid];
  writeSync(fd, `${pids.join("\n")}\n`);
  closeSync(fd);
  heldHere.add(dataDir);
  return {
    addProcess(pid) {
      pids.push(pid);
      writeFileSync(path, `${pids.join("\n")}\n`);
    },
    release() {
      if (!heldHere.delete(dataDir)) return;
      if (pidsIn(path)[0] === process.pid) unlinkSync(path);
    },
  };
}
