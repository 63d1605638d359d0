/**
 * A real redis-server (Debian's package; Valkey speaks the same protocol) on a free port in a temp
 * directory, with no persistence, for the result-cache tests: stopped and started again on the same
 * port to play an outage. A missing binary is a failure, never a skip.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unusedPort } from "./ports.js";
import { waitFor } from "./wait-for.js";

export interface TestValkey {
  url: string;
  port: number;
  /** Stops the server (SIGTERM), waiting for it to exit: every connection to it is gone. */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  /** Stops it for good and removes its directory. */
  close(): Promise<void>;
}

const BINARY = process.env.POOLGATE_TEST_REDIS_SERVER ?? "redis-server";

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export async function startTestValkey(): Promise<TestValkey> {
  const port = await unusedPort();
  const dir = mkdtempSync(join(tmpdir(), "poolgate-valkey-"));
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    const spawned = spawn(BINARY, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], { stdio: "ignore" });
    child = spawned;
    const failed = new Promise<never>((_, reject) => {
      spawned.once("error", (err) => reject(new Error(`these tests need ${BINARY} (Debian: apt-get install redis-server): ${err.message}`)));
    });
    await Promise.race([waitFor(() => accepts(port), 10000, `${BINARY} on port ${port}`), failed]);
  };
  const stop = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill("SIGTERM");
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop,
    start,
    close: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
