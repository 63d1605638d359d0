/**
 * A short memory for the status page: once a second, the request totals and every pool's use, kept
 * for the last five minutes, so a page opened during an incident shows what led up to it.
 */
import type { StatusSample } from "../../schemas/status.js";
import type { Cluster } from "../clusters/cluster.js";
import type { RequestTotals } from "./metrics.js";

const SAMPLES = 300;
const INTERVAL_MS = 1000;

export class StatusHistory {
  private readonly samples: StatusSample[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly totals: RequestTotals,
    private readonly clusters: () => Iterable<Cluster>,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The samples, oldest first, with one taken now at the end. */
  recent(): StatusSample[] {
    return [...this.samples, this.take()];
  }

  sample(): void {
    this.samples.push(this.take());
    if (this.samples.length > SAMPLES) this.samples.shift();
  }

  private take(): StatusSample {
    const pools: StatusSample["pools"] = {};
    for (const cluster of this.clusters()) {
      for (const endpoint of cluster.endpoints) {
        const { active, idle, waiting } = cluster.poolOf(endpoint).stats();
        pools[endpoint.name] = { active, idle, waiting };
      }
    }
    const { requests, clientErrors, serverErrors } = this.totals;
    return { at: this.now(), requests, clientErrors, serverErrors, pools };
  }
}
