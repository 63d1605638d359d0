/**
 * A steady load of writes and reads through a gateway while a Blue/Green deployment switches over
 * (bluegreen-switchover.ts; either engine's stand-in), and what happened to each request: the test asserts on it, the bench
 * (`lifecycle` in bench.json) reports its figures. The switchover's completion event is delivered as
 * the stack's failover hook delivers it: POST /v1/admin/topology/refresh.
 */
import type { BlueGreenDeployment, SwitchoverEvent, SwitchoverOptions, SwitchoverTimes } from "./bluegreen-switchover.js";
import type { TestGateway } from "./gateway.js";
import { waitFor } from "./wait-for.js";

export interface SwitchoverLoadOptions {
  /** A write that returns `server` and `port` (where it ran). */
  write: string;
  /** A read that returns `server` and `port`. */
  read: string;
  /** Each request's deadline. */
  timeoutMs: number;
  /** Concurrent writers and readers (default 3 and 2). */
  writers?: number;
  readers?: number;
  /** Successful writes to see after the switchover before the load stops (default 20). */
  writesAfterEnd?: number;
  switchover?: SwitchoverOptions;
}

export interface Outcome {
  kind: "write" | "read";
  startedAt: number;
  endedAt: number;
  status: number;
  server?: string;
  port?: number;
  error?: string;
}

export interface SwitchoverLoadResult {
  events: SwitchoverEvent[];
  times: SwitchoverTimes;
  /** Requests sent after the sessions were dropped that failed: the switchover should fail none. */
  failedAfterBlock: Outcome[];
  /** Requests sent before the drop that failed (in flight when their session was cut). */
  failedInFlight: number;
  /** Successful writes sent after the drop: where they ran. */
  writesAfterBlock: { server: string; port: number }[];
  writesAfterEnd: number;
  readsAfterEnd: { server: string; port: number }[];
  /** From the switchover's end to the first write completed after it, ms. */
  writesBackAfterMs: number;
}

export async function runSwitchoverUnderLoad(gw: TestGateway, deployment: BlueGreenDeployment, options: SwitchoverLoadOptions): Promise<SwitchoverLoadResult> {
  const outcomes: Outcome[] = [];
  let stop = false;
  const request = async (kind: Outcome["kind"]): Promise<void> => {
    const startedAt = performance.now();
    const response = await gw.post("/v1/query", { sql: kind === "write" ? options.write : options.read, timeoutMs: options.timeoutMs });
    const outcome: Outcome = { kind, startedAt, endedAt: performance.now(), status: response.status };
    if (response.status === 200) {
      outcome.server = String(response.body.rows[0]?.server);
      outcome.port = Number(response.body.rows[0]?.port);
    } else {
      outcome.error = `${response.body?.error?.code}: ${response.body?.error?.message}`;
    }
    outcomes.push(outcome);
  };
  const loop = async (kind: Outcome["kind"]) => {
    while (!stop) await request(kind);
  };
  const loops = [...Array.from({ length: options.writers ?? 3 }, () => loop("write")), ...Array.from({ length: options.readers ?? 2 }, () => loop("read"))];
  try {
    await waitFor(() => outcomes.filter((o) => o.status === 200 && o.kind === "write").length >= 10, 30000, "writes before the switchover");
    const events: SwitchoverEvent[] = [];
    const times = await deployment.switchover(async (event) => {
      events.push(event);
      if (event === "RDS-EVENT-0260") await gw.post("/v1/admin/topology/refresh", {});
    }, options.switchover);
    const wanted = options.writesAfterEnd ?? 20;
    // Readers too: a reader held across the whole block may be answered only after the writes are back.
    const afterEnd = (kind: Outcome["kind"]) => outcomes.filter((o) => o.kind === kind && o.status === 200 && o.startedAt > times.endedAt).length;
    await waitFor(() => afterEnd("write") >= wanted && afterEnd("read") >= (options.readers ?? 2), 30000, "writes and reads after the switchover");
    stop = true;
    await Promise.all(loops);
    const afterBlock = outcomes.filter((o) => o.startedAt >= times.blockedAt);
    const writesBack = outcomes.filter((o) => o.kind === "write" && o.status === 200 && o.endedAt >= times.endedAt).map((o) => o.endedAt);
    return {
      events,
      times,
      failedAfterBlock: afterBlock.filter((o) => o.status !== 200),
      failedInFlight: outcomes.filter((o) => o.startedAt < times.blockedAt && o.status !== 200).length,
      writesAfterBlock: afterBlock.filter((o) => o.kind === "write" && o.status === 200).map((o) => ({ server: o.server as string, port: o.port as number })),
      writesAfterEnd: outcomes.filter((o) => o.kind === "write" && o.status === 200 && o.startedAt > times.endedAt).length,
      readsAfterEnd: outcomes.filter((o) => o.kind === "read" && o.status === 200 && o.startedAt > times.endedAt).map((o) => ({ server: o.server as string, port: o.port as number })),
      writesBackAfterMs: Math.min(...writesBack) - times.endedAt,
    };
  } finally {
    stop = true;
    await Promise.all(loops);
  }
}
