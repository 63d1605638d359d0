/**
 * One embedded PostgreSQL per data directory. PGlite keeps no lock of its own, and two of them
 * writing the same files (a second `npm start` in the same folder) would corrupt them, so the
 * directory holds `poolgate.lock`: created exclusively and whole (written aside, then linked into
 * place), naming the processes that use the files (the gateway and its PGlite server). A lock whose processes are all gone (a crash, a container restarted
 * with the same pids) is taken over; one with a live process is refused with a clear error.
 */
import { randomUUID } from "node:crypto";
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

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

function refusal(path: string, pid: number): Error {
  return new Error(
    `the embedded database in ${dirname(path)} is in use by process ${pid} (another poolgate started there): stop it, or give this one ` +
      `its own directory with POOLGATE_DATA_DIR (embedded.dataDir). Two servers on the same files would corrupt them. ` +
      `If no poolgate uses that directory (process ${pid} is something else now), remove ${path}.`,
  );
}

/** Creates `path` holding `content` only where it does not exist yet: written aside, then linked into place, so a reader never sees it empty. */
function createWith(path: string, content: string): boolean {
  const aside = `${path}.${process.pid}.${randomUUID()}`;
  writeFileSync(aside, content);
  try {
    linkSync(aside, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  } finally {
    unlinkSync(aside);
  }
}

/** Replaces `path`'s content in one step (renamed over it). */
function replaceWith(path: string, content: string): void {
  const aside = `${path}.${process.pid}.${randomUUID()}`;
  writeFileSync(aside, content);
  renameSync(aside, path);
}

/**
 * Moves a stale lock out of the way. Only one contender can move a given file; one that finds it
 * already replaced by a live holder's (taken between its look and its move) puts that back.
 */
function removeStale(dataDir: string, path: string): void {
  const moved = `${path}.stale.${process.pid}.${randomUUID()}`;
  try {
    renameSync(path, moved);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  if (inUse(dataDir, pidsIn(moved)) !== undefined) {
    try {
      linkSync(moved, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  unlinkSync(moved);
}

/** Takes the directory's lock, or throws naming the process that holds it. `dataDir` must exist. */
export function lockDataDir(dataDir: string): DataDirLock {
  const path = join(dataDir, LOCK_FILE);
  const pids = [process.pid];
  const content = () => `${pids.join("\n")}\n`;
  for (let attempt = 0; !createWith(path, content()); attempt++) {
    const holder = inUse(dataDir, pidsIn(path));
    if (holder !== undefined) throw refusal(path, holder);
    if (attempt >= 3) throw new Error(`could not take the lock ${path}: other processes keep replacing it`);
    removeStale(dataDir, path);
  }
  heldHere.add(dataDir);
  return {
    addProcess(pid) {
      pids.push(pid);
      replaceWith(path, content());
    },
    release() {
      if (!heldHere.delete(dataDir)) return;
      if (pidsIn(path)[0] === process.pid) unlinkSync(path);
    },
  };
}
