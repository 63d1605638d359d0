/** What routing needs to know about a cluster's instances; the monitor provides it, or a fixed view. */
import type { Endpoint } from "./endpoint.js";
import type { EndpointRecord } from "./endpoint-record.js";

export interface Topology {
  readonly endpoints: readonly Endpoint[];
  primary(): Endpoint | undefined;
  readReplicas(): Endpoint[];
  /** The primary as soon as one is known, or undefined at the deadline (clock ms). */
  waitForPrimary(deadline: number): Promise<Endpoint | undefined>;
  /**
   * Something suggests the primary is gone or demoted. `about` names the endpoint the sign came from:
   * a sign about an endpoint that is no longer the primary (a late error from the old one) is not a
   * new failover, it only makes the topology look again.
   */
  signalFailover(reason: string, about?: Endpoint): void;
  /**
   * Aborted when `endpoint` stops being the primary (already aborted if it is not the primary now):
   * callers queued on its pool for primary work give up at once and go where the primary is.
   */
  primaryLease(endpoint: Endpoint): AbortSignal;
  /** Re-checks every endpoint now. */
  checkAll(): Promise<void>;
  close(): void;
}

/** A single endpoint that is always the primary: the embedded database, which cannot fail over. */
export class FixedTopology implements Topology {
  readonly endpoints: readonly Endpoint[];
  private readonly lease = new AbortController().signal;

  constructor(private readonly only: EndpointRecord) {
    only.role = "primary";
    only.healthy = true;
    only.lagMs = 0;
    this.endpoints = [only];
  }

  primary(): Endpoint {
    return this.only;
  }

  readReplicas(): Endpoint[] {
    return [];
  }

  waitForPrimary(): Promise<Endpoint> {
    return Promise.resolve(this.only);
  }

  signalFailover(): void {}
  primaryLease(): AbortSignal {
    return this.lease;
  }

  checkAll(): Promise<void> {
    return Promise.resolve();
  }

  close(): void {}
}
