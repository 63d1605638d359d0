/**
 * Replica lag, estimated the same way for every engine: by position when the engine has positions
 * (WAL LSNs, GTIDs), else by the delay the replica itself reports (Seconds_Behind_Master, Aurora's
 * replica lag), else unknown (infinite: the replica gets no reads that bound staleness).
 */

export interface PrimarySample {
  at: number;
  position: string;
}

export interface ReplicaView {
  position: string | null;
  /** The replica's own account of its delay, in ms, when it gives one. */
  reportedLagMs: number | null;
  /** When the check that read the replica's figures began. */
  checkStartedAt?: number | null;
}

/**
 * How long ago the primary was first seen at a position this replica has not applied yet: the
 * replica is at most that far behind. Caught up with every sample taken so far means 0.
 * `compare(a, b) >= 0` means a server at `a` has applied everything up to `b`.
 */
export function replicaLagMs(
  replica: ReplicaView,
  primaryHistory: readonly PrimarySample[],
  compare: (a: string, b: string) => number,
  now: number,
): number {
  if (replica.position === null) return replica.reportedLagMs ?? Number.POSITIVE_INFINITY;
  for (const sample of primaryHistory) {
    if (compare(replica.position, sample.position) < 0) return now - sample.at;
  }
  return 0;
}

/**
 * The time (gateway clock) before which every completed write is applied on the replica: the start of
 * the newest primary check whose position the replica has applied (the position read then is at or
 * past every write completed before it), else, without positions, the replica's check start less its
 * own reported delay. null when neither tells. A read at `now` from this replica is at most
 * `now - appliedThroughAt` stale: whatever the lag did since, this bound holds at the moment of the read.
 */
export function appliedThroughAt(replica: ReplicaView, primaryHistory: readonly PrimarySample[], compare: (a: string, b: string) => number): number | null {
  if (replica.position === null) {
    if (replica.reportedLagMs === null || replica.checkStartedAt === undefined || replica.checkStartedAt === null) return null;
    return replica.checkStartedAt - replica.reportedLagMs;
  }
  for (let i = primaryHistory.length - 1; i >= 0; i--) {
    const sample = primaryHistory[i] as PrimarySample;
    if (compare(replica.position, sample.position) >= 0) return sample.at;
  }
  return null;
}
