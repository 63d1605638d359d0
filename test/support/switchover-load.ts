/**
 * A steady load of writes and reads through a gateway while a Blue/Green deployment switches over
 * (bluegreen-switchover.ts; either engine's stand-in), and what happened to each request: the test asserts on it, the bench
 * (`lifecycle` in bench.json) reports its figures. The switchover's completion event is delivered as
 * the stack's failover hook delivers it: POST /v1/admin/topology/refresh.
 */
import type { BlueGreenDeployment, SwitchoverEvent, SwitchoverOptions, SwitchoverTimes } from "./bluegreen-switchover.js";
import type { TestGateway } from "./gateway.js";
import { type LoadOutcome, type LoadRequests, startLoad } from "./steady-load.js";
import { waitFor } from "./wait-for.js";

export interface SwitchoverLoadOptions extends LoadRequests {
  /** Each request's deadline. */
  timeoutMs: number;
  /** Successful writes to see after the switchover before the load stops (default 20). */
  writesAfterEnd?: number;
  switchover?: SwitchoverOptions;
}

export interface SwitchoverLoadResult {
  events: SwitchoverEvent[];
  times: SwitchoverTimes;
  /** Requests sent after the sessions were dropped that failed: the switchover should fail none. */
  failedAfterBlock: LoadOutcome[];
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
  const load = startLoad(gw, options);
  const { outcomes } = load;
  try {
    await waitFor(() => outcomes.filter((o) => o.status === 200 && o.kind === "write").length >= 10, 30000, "writes before the switchover");
    const events: SwitchoverEvent[] = [];
    const times = await deployment.switchover(async (event) => {
      events.push(event);
      if (event === "RDS-EVENT-0260") await gw.post("/v1/admin/topology/refresh", {});
    }, options.switchover);
    const wanted = options.writesAfterEnd ?? 20;
    // Readers too: a reader held across the whole block may be answered only after the writes are back.
    const afterEnd = (kind: LoadOutcome["kind"]) => outcomes.filter((o) => o.kind === kind && o.status === 200 && o.startedAt > times.endedAt).length;
    await waitFor(() => afterEnd("write") >= wanted && afterEnd("read") >= (options.readers ?? 2), 30000, "writes and reads after the switchover");
    await load.stop();
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
    await load.stop();
  }
}
