/**
 * The embedded default: PGlite (PostgreSQL compiled to WebAssembly) with its data in a local
 * directory, served over a unix socket by a child process and reached through the ordinary `pg`
 * engine, so the embedded default exercises the same code path as a real server.
 */
import { type ChildProcess, fork } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type DataDirLock, lockDataDir } from "./data-dir-lock.js";

export interface EmbeddedPostgres {
  /** postgres:// URL for the pg engine. */
  url: string;
  dataDir: string;
  stop(): Promise<void>;
}

const SERVER_SCRIPT = new URL("./pglite-server.mjs", import.meta.url);
const PORT_IN_SOCKET_NAME = 5432;

export async function startEmbeddedPostgres(dataDir: string, startTimeoutMs = 60000): Promise<EmbeddedPostgres> {
  const absoluteDataDir = resolve(dataDir);
  mkdirSync(absoluteDataDir, { recursive: true });
  // Before anything touches the files: a second gateway on the same directory is refused here.
  const lock = lockDataDir(absoluteDataDir);
  const socketDir = mkdtempSync(join(tmpdir(), "poolgate-pglite-"));
  const socketPath = join(socketDir, `.s.PGSQL.${PORT_IN_SOCKET_NAME}`);
  const child = fork(SERVER_SCRIPT, [absoluteDataDir, socketPath], { stdio: ["ignore", "ignore", "pipe", "ipc"], execArgv: [] });
  if (child.pid !== undefined) lock.addProcess(child.pid);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });

  try {
    await new Promise<void>((ready, fail) => {
      const timer = setTimeout(() => fail(new Error(`embedded PostgreSQL did not start within ${startTimeoutMs}ms`)), startTimeoutMs);
      child.once("message", () => {
        clearTimeout(timer);
        ready();
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        fail(new Error(`embedded PostgreSQL exited with code ${code}: ${stderr.trim()}`));
      });
    });
  } catch (err) {
    await stopChild(child, socketDir, lock);
    throw err;
  }

  return {
    url: `postgres://postgres@localhost:${PORT_IN_SOCKET_NAME}/postgres?host=${encodeURIComponent(socketDir)}`,
    dataDir: absoluteDataDir,
    stop: () => stopChild(child, socketDir, lock),
  };
}

/** Stops the PGlite server, then lets the directory go (only once nothing uses its files). */
function stopChild(child: ChildProcess, socketDir: string, lock: DataDirLock): Promise<void> {
  return new Promise((done) => {
    const finish = () => {
      clearTimeout(killTimer);
      rmSync(socketDir, { recursive: true, force: true });
      lock.release();
      done();
    };
    const killTimer = setTimeout(() => child.kill("SIGKILL"), 5000);
    if (child.exitCode !== null || child.signalCode !== null) return finish();
    child.once("exit", finish);
    child.kill("SIGTERM");
  });
}
