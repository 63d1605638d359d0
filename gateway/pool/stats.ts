/** Counters and the acquire-wait histogram kept by a pool, for the health body and metrics. */
import type { PoolStats } from "../../schemas/health.js";

/** Upper bounds (ms) of the acquire-wait histogram buckets; waits above the last count only in `count`. */
export const ACQUIRE_WAIT_BUCKETS_MS = [0.1, 0.5, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000];

export class PoolCounters {
  created = 0;
  evicted = 0;
  retired = 0;
  /** Full resets before a session went to another tenant (principal). */
  resets = 0;
  /** Resets when a session came back from its caller: session locks released, a transaction rolled back, or the full reset. */
  releaseResets = 0;
  private readonly waitBuckets = new Array<number>(ACQUIRE_WAIT_BUCKETS_MS.length + 1).fill(0);
  private waitCount = 0;
  private waitSumMs = 0;
  private waitMaxMs = 0;

  recordAcquireWait(ms: number): void {
    let i = 0;
    while (i < ACQUIRE_WAIT_BUCKETS_MS.length && ms > (ACQUIRE_WAIT_BUCKETS_MS[i] as number)) i++;
    this.waitBuckets[i] = (this.waitBuckets[i] as number) + 1;
    this.waitCount++;
    this.waitSumMs += ms;
    if (ms > this.waitMaxMs) this.waitMaxMs = ms;
  }

  /** The acquire-wait histogram as counted: waits per bucket (the last slot: above every bound), their sum and number. */
  acquireWaitCounts(): { perBucket: readonly number[]; sumMs: number; count: number } {
    return { perBucket: this.waitBuckets, sumMs: this.waitSumMs, count: this.waitCount };
  }

  acquireWait(): PoolStats["acquireWaitMs"] {
    let cumulative = 0;
    const buckets = ACQUIRE_WAIT_BUCKETS_MS.map((le, i) => {
      cumulative += this.waitBuckets[i] as number;
      return { le, count: cumulative };
    });
    return { count: this.waitCount, buckets, sumMs: this.waitSumMs, maxMs: this.waitMaxMs };
  }
}
