/**
 * A steady load of writes and reads through a gateway while something happens to the cluster (an
 * instance added, its capacity changing), and each request's outcome: where it ran (the instance's
 * server id and port, as the SQL reports them) or how it failed. The tests judge the outcomes.
 */
import type { TestGateway } from "./gateway.js";
import { waitFor } from "./wait-for.js";

export interface LoadOutcome {
  kind: "write" | "read";
  /** performance.now() when it was sent and answered. */
  startedAt: number;
  endedAt: number;
  status: number;
  server?: string;
  port?: number;
  error?: string;
}

/** The requests of a load: what each writer and reader sends, how many of each, and their deadline. */
export interface LoadRequests {
  /** A write answering `server` and `port` (where it ran). */
  write: string;
  /** A read answering `server` and `port`. */
  read: string;
  /** Concurrent writers and readers (default 3 and 2). */
  writers?: number;
  readers?: number;
  /** Each request's deadline (default 15 s). */
  timeoutMs?: number;
}

export interface SteadyLoadOptions extends LoadRequests {
  /** Successful writes to see after `during` before the load stops (default 10). */
  writesAfter?: number;
}

/** A load running: every answered request's outcome so far, and the way to stop it (resolves once every loop ended). */
export interface RunningLoad {
  readonly outcomes: LoadOutcome[];
  stop(): Promise<void>;
}

/** Starts `writers` + `readers` loops, each sending its request again as soon as it is answered. */
export function startLoad(gw: TestGateway, options: LoadRequests): RunningLoad {
  const outcomes: LoadOutcome[] = [];
  let stopped = false;
  const loop = async (kind: LoadOutcome["kind"]) => {
    while (!stopped) {
      const startedAt = performance.now();
      const response = await gw.post("/v1/query", { sql: kind === "write" ? options.write : options.read, timeoutMs: options.timeoutMs ?? 15000 });
      const endedAt = performance.now();
      const row = response.body?.rows?.[0];
      outcomes.push(
        response.status === 200
          ? { kind, startedAt, endedAt, status: 200, server: String(row?.server), port: Number(row?.port) }
          : { kind, startedAt, endedAt, status: response.status, error: `${response.body?.error?.code}: ${response.body?.error?.message}` },
      );
    }
  };
  const loops = [...Array.from({ length: options.writers ?? 3 }, () => loop("write")), ...Array.from({ length: options.readers ?? 2 }, () => loop("read"))];
  return {
    outcomes,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/**
 * Starts the load, waits for 10 successful requests, runs `during` (which may read the outcomes so
 * far), then waits for `writesAfter` successful writes sent after it ended and stops the load.
 */
export async function underSteadyLoad(
  gw: TestGateway,
  options: SteadyLoadOptions,
  during: (outcomes: readonly LoadOutcome[]) => Promise<void>,
): Promise<{ outcomes: LoadOutcome[]; endedAt: number }> {
  const load = startLoad(gw, options);
  const { outcomes } = load;
  try {
    await waitFor(() => outcomes.filter((o) => o.status === 200).length >= 10, 30000, "requests before the change");
    await during(outcomes);
    const endedAt = performance.now();
    const after = options.writesAfter ?? 10;
    await waitFor(() => outcomes.filter((o) => o.kind === "write" && o.status === 200 && o.startedAt > endedAt).length >= after, 30000, "writes after the change");
    return { outcomes, endedAt };
  } finally {
    await load.stop();
  }
}

/** The outcomes that failed, for an assertion that prints them. */
export function failed(outcomes: readonly LoadOutcome[]): LoadOutcome[] {
  return outcomes.filter((o) => o.status !== 200);
}
