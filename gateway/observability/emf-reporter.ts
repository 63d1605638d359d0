/**
 * Pool metrics as CloudWatch Embedded Metric Format: every interval, one JSON line per endpoint on
 * stdout, which CloudWatch Logs (the awslogs driver on ECS) turns into metrics — no agent, no API
 * calls. Per endpoint (dimensions cluster and endpoint): the acquire-wait p99 and mean over the
 * interval, the number of acquires, and the active, idle, waiting and total connections at the end.
 * With request totals, one more document for the gateway (dimension `service`): requests, client and
 * server errors, retries and failovers over the interval.
 */
import type { PoolStats } from "../../schemas/health.js";
import type { RequestTotals } from "./metrics.js";

export interface EmfSettings {
  intervalMs: number;
  namespace: string;
}

export interface PoolSample {
  cluster: string;
  endpoint: string;
  stats: PoolStats;
}

/** The request totals, by their EMF metric names. */
const TOTALS_METRICS: Record<keyof RequestTotals, string> = {
  requests: "Requests",
  clientErrors: "ClientErrors",
  serverErrors: "ServerErrors",
  retries: "Retries",
  failovers: "Failovers",
  cacheReads: "CacheReads",
  cacheHits: "CacheHits",
};

interface Previous {
  count: number;
  sumMs: number;
  cumulative: number[];
}

/** Cumulative histogram counts -> counts per bucket. */
function perBucket(cumulative: readonly number[]): number[] {
  return cumulative.map((count, i) => count - (i > 0 ? (cumulative[i - 1] as number) : 0));
}

/** The upper bound of the bucket holding the q-th quantile of per-bucket counts; 0 without data. */
export function quantileFromBuckets(bounds: readonly number[], counts: readonly number[], overflow: number, q: number): number {
  const total = counts.reduce((sum, count) => sum + count, 0) + overflow;
  if (total === 0) return 0;
  const rank = Math.ceil(q * total);
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i] as number;
    if (seen >= rank) return bounds[i] as number;
  }
  // Above the last bound: report the last bound's double as a floor of what happened.
  return (bounds[bounds.length - 1] as number) * 2;
}

export class EmfReporter {
  private readonly previous = new Map<string, Previous>();
  private previousTotals: RequestTotals | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly settings: EmfSettings,
    private readonly samples: () => Iterable<PoolSample>,
    private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
    private readonly now: () => number = Date.now,
    private readonly totals: (() => RequestTotals) | undefined = undefined,
  ) {}

  start(): void {
    this.report(); // sets the baseline
    this.timer = setInterval(() => this.report(), this.settings.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Emits one EMF document per endpoint, with the acquire waits since the previous report. */
  report(): void {
    const timestamp = this.now();
    const seen = new Set<string>();
    for (const sample of this.samples()) {
      const key = `${sample.cluster}\n${sample.endpoint}`;
      seen.add(key);
      const wait = sample.stats.acquireWaitMs;
      const cumulative = wait.buckets.map((bucket) => bucket.count);
      const stored = this.previous.get(key);
      // A pool that restarted (an endpoint dropped and found again) counts from zero again.
      const before = stored && stored.count <= wait.count ? stored : { count: 0, sumMs: 0, cumulative: cumulative.map(() => 0) };
      this.previous.set(key, { count: wait.count, sumMs: wait.sumMs, cumulative });
      const nowCounts = perBucket(cumulative);
      const wasCounts = perBucket(before.cumulative);
      const delta = nowCounts.map((count, i) => count - (wasCounts[i] ?? 0));
      const acquires = wait.count - before.count;
      const inBuckets = delta.reduce((sum, count) => sum + count, 0);
      const p99 = quantileFromBuckets(
        wait.buckets.map((bucket) => bucket.le),
        delta,
        acquires - inBuckets,
        0.99,
      );
      const document = {
        _aws: {
          Timestamp: timestamp,
          CloudWatchMetrics: [
            {
              Namespace: this.settings.namespace,
              Dimensions: [["cluster", "endpoint"]],
              Metrics: [
                { Name: "PoolAcquireWaitP99", Unit: "Milliseconds" },
                { Name: "PoolAcquireWaitMean", Unit: "Milliseconds" },
                { Name: "PoolAcquires", Unit: "Count" },
                { Name: "PoolActive", Unit: "Count" },
                { Name: "PoolIdle", Unit: "Count" },
                { Name: "PoolWaiting", Unit: "Count" },
                { Name: "PoolTotal", Unit: "Count" },
              ],
            },
          ],
        },
        cluster: sample.cluster,
        endpoint: sample.endpoint,
        PoolAcquireWaitP99: p99,
        PoolAcquireWaitMean: acquires > 0 ? (wait.sumMs - before.sumMs) / acquires : 0,
        PoolAcquires: acquires,
        PoolActive: sample.stats.active,
        PoolIdle: sample.stats.idle,
        PoolWaiting: sample.stats.waiting,
        PoolTotal: sample.stats.total,
      };
      this.write(JSON.stringify(document));
    }
    for (const key of this.previous.keys()) if (!seen.has(key)) this.previous.delete(key);
    if (this.totals) this.reportTotals(timestamp, this.totals());
  }

  /** The gateway's request counts since the previous report. */
  private reportTotals(timestamp: number, now: RequestTotals): void {
    const before = this.previousTotals ?? { requests: 0, clientErrors: 0, serverErrors: 0, retries: 0, failovers: 0, cacheReads: 0, cacheHits: 0 };
    this.previousTotals = { ...now };
    const counts = Object.entries(TOTALS_METRICS).map(([key, name]) => [name, Math.max(0, now[key as keyof RequestTotals] - before[key as keyof RequestTotals])] as const);
    const document = {
      _aws: {
        Timestamp: timestamp,
        CloudWatchMetrics: [{ Namespace: this.settings.namespace, Dimensions: [["service"]], Metrics: counts.map(([name]) => ({ Name: name, Unit: "Count" })) }],
      },
      service: "poolgate",
      ...Object.fromEntries(counts),
    };
    this.write(JSON.stringify(document));
  }
}
