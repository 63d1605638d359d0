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
