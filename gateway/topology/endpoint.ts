/** One database instance endpoint of a cluster and what the monitor last saw of it (its pools are the cluster's PoolSet's). */

export type EndpointRole = "primary" | "replica" | "unknown";

export class Endpoint {
  role: EndpointRole = "unknown";
  /** The last check reached the instance. */
  healthy = false;
  /** WAL position: written on a primary, replayed on a replica. */
  position: string | null = null;
  /** The replica's own account of its delay (Seconds_Behind_Master, Aurora's lag), used where there are no positions. */
  reportedLagMs: number | null = null;
  /** Estimated replication lag; 0 when caught up with the primary's last seen position. */
  lagMs: number | null = null;
  /** Why the endpoint gets no reads (lag), or null. */
  banReason: string | null = null;
  lastError: string | undefined;
  /** Requests currently routed here, for least-outstanding balancing. */
  outstanding = 0;

  constructor(
    readonly name: string,
    readonly url: string,
    /** The configured writer (cluster) endpoint, preferred when several report primary. */
    readonly configuredWriter: boolean,
  ) {}

  get servesReads(): boolean {
    return this.healthy && this.role === "replica" && this.banReason === null;
  }
}
