/** One database instance endpoint of a cluster, with its own pool and what the monitor last saw of it. */
import type { Pool } from "../pool/pool.js";

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
  readonly pool: Pool;

  constructor(
    readonly name: string,
    readonly url: string,
    /** The configured writer (cluster) endpoint, preferred when several report primary. */
    readonly configuredWriter: boolean,
    /** Builds the endpoint's pool; its connections may consult the endpoint (role checks). */
    createPool: (endpoint: Endpoint) => Pool,
  ) {
    this.pool = createPool(this);
  }

  get servesReads(): boolean {
    return this.healthy && this.role === "replica" && this.banReason === null;
  }
}
