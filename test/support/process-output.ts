/**
 * A child process whose stdout and stderr are collected as one text, and its exit: how the tests that
 * run the gateway as a process (start-up, lifecycle, the production build) watch its log lines.
 */
import { type ChildProcess, spawn, type SpawnOptions } from "node:child_process";

export interface WatchedProcess {
  child: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  output: () => string;
  /** The exit code (null when a signal ended it). */
  exited: Promise<number | null>;
}

export function spawnWatched(command: string, args: readonly string[], options: Omit<SpawnOptions, "stdio">): WatchedProcess {
  const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output: () => output, exited };
}
