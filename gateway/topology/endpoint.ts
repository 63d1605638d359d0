/**
 * One database instance endpoint of a cluster, as every part outside topology/ sees it: what the
 * monitor last saw of it, read-only (the monitor's record is endpoint-record.ts, written only in
 * topology/). Its pools are the cluster's PoolSet's.
 */
import type { EndpointRecord } from "./endpoint-record.js";

export type { EndpointRole } from "./endpoint-record.js";

/**
 * Read-only but for `outstanding`: the count of requests routed here, kept by the attempts
 * (execution/attempt.ts) for least-outstanding balancing.
 */
export type Endpoint = Readonly<Omit<EndpointRecord, "outstanding" | "readerInstancesSeen">> & {
  outstanding: number;
  readonly readerInstancesSeen: ReadonlySet<string>;
};
