/**
 * One database instance endpoint of a cluster, as every part outside topology/ sees it: what the
 * monitor last saw of it, read-only (the monitor's record is endpoint-record.ts, written only in
 * topology/). Its pools are the cluster's PoolSet's.
 */
import type { EndpointRecord } from "./endpoint-record.js";

export type { EndpointRole } from "./endpoint-record.js";

/**
 * Read-only: the attempts (execution/attempt.ts) count the requests routed here for least-outstanding
 * balancing through `beginWork` / `endWork`, and read the count as `outstanding`.
 */
export type Endpoint = Readonly<Omit<EndpointRecord, "readerInstancesSeen">> & {
  readonly readerInstancesSeen: ReadonlySet<string>;
};
