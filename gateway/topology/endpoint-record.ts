/**
 * The topology's writable record of one endpoint: what the monitor last saw of it. Only topology/
 * writes it (the lint holds every other folder to the read-only Endpoint of endpoint.ts). The
 * attempts' count of requests in flight, `outstanding`, changes only through `beginWork` / `endWork`.
 */
/** What the last check found the endpoint to reach. */
export type EndpointRole = "primary" | "replica" | "unknown";

export class EndpointRecord {
  role: EndpointRole = "unknown";
  /** The last check reached the instance. */
  healthy = false;
  /** WAL position: written on a primary, replayed on a replica. */
  position: string | null = null;
  /** The replica's own account of its delay (Seconds_Behind_Master, Aurora's lag), used where there are no positions. */
  reportedLagMs: number | null = null;
  /** Estimated replication lag; 0 when caught up with the primary's last seen position. */
  lagMs: number | null = null;
  /**
   * Gateway clock time (this task's) before which every write that completed is applied here: what a
   * staleness bound is checked against at the moment of the read (now - appliedThroughAt), so a lag
   * that grew since the last check cannot hide. null when unknown.
   */
  appliedThroughAt: number | null = null;
  /** When the last check of this endpoint began (gateway clock). */
  checkStartedAt: number | null = null;
  /** The instance the last check reached, as the database names itself (Aurora's server id), or null. */
  serverId: string | null = null;
  /**
   * The replica lag the cluster's instance list last gave for this endpoint's instance (Aurora's
   * replica_lag_in_msec, read by discovery), or null: shown on the status page beside the monitor's own estimate.
   */
  listedLagMs: number | null = null;
  /** What this endpoint, as a writer, reports of its readers' positions by server id (Aurora). */
  readerPositions: ReadonlyMap<string, string> | null = null;
  /** The engine's own position functions were refused here (Aurora): shown on the status page. */
  positionsRefused: { sqlstate: string; message: string } | null = null;
  /**
   * The instances (server ids, Aurora) this endpoint's checks reached as readers: more than one means
   * the endpoint is a name spread over several instances (Aurora's reader endpoint, round-robin),
   * which is never taken for the writer, whichever instance it happens to lead to.
   */
  readonly readerInstancesSeen = new Set<string>();
  /** Why the endpoint gets no reads (lag), or null. */
  banReason: string | null = null;
  lastError: string | undefined;
  /** Requests currently routed here, for least-outstanding balancing (beginWork / endWork). */
  outstanding = 0;

  constructor(
    readonly name: string,
    readonly url: string,
    /** The configured writer (cluster) endpoint, preferred when several report primary. */
    readonly configuredWriter: boolean,
  ) {}

  /** A name spread over several instances (see readerInstancesSeen). */
  get spreadsOverInstances(): boolean {
    return this.readerInstancesSeen.size > 1;
  }

  get servesReads(): boolean {
    return this.healthy && this.role === "replica" && this.banReason === null;
  }

  /** Work was routed here (an attempt counts it before it waits for a session): one more outstanding request. */
  beginWork(): void {
    this.outstanding++;
  }

  /** Work routed here ended (its session went back, or none could be had): one outstanding request fewer. */
  endWork(): void {
    this.outstanding--;
  }
}

/** A cluster's configured endpoints: its writer (cluster) URL first, then its reader URLs in order. */
export function configuredEndpoints(cluster: string, writerUrl: string, readerUrls: readonly string[]): EndpointRecord[] {
  return [new EndpointRecord(`${cluster}/writer`, writerUrl, true), ...readerUrls.map((url, i) => new EndpointRecord(`${cluster}/reader${i + 1}`, url, false))];
}
