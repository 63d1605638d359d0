/** What routing needs to know about a cluster's instances; the monitor provides it, or a fixed view. */
import type { Endpoint } from "./endpoint.js";

export interface Topology {
  readonly endpoints: readonly Endpoint[];
  primary(): Endpoint | undefined;
  readReplicas(): Endpoint[];
  /** The primary as soon as one is known, or undefined at the deadline (clock ms). */
  waitForPrimary(deadline: number): Promise<Endpoint | undefined>;
  signalFailover(reason: string): void;
  /** Re-checks every endpoint now. */
  checkAll(): Promise<void>;
  close(): void;
}

/** A single endpoint that is always the primary: the embedded database, which cannot fail over. */
export class FixedTopology implements Topology {
  readonly endpoints: readonly Endpoint[];

  constructor(private readonly only: Endpoint) {
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

  checkAll(): Promise<void> {
    return Promise.resolve();
  }

  close(): void {}
}
