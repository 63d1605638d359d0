/**
 * A Prometheus histogram kept by hand, for the hot path (one observation per request and per pool
 * acquire). prom-client's Histogram validates and hashes the label object on every observe, even
 * through a child from labels(); here each label-value tuple's counts are found through one map per
 * label, keyed by the values themselves, and an observation is a bucket search and three additions.
 * It registers in a prom-client Registry and exports exactly what prom-client's Histogram would
 * (cumulative `_bucket` lines with `le`, `+Inf`, `_sum`, `_count`), so /metrics and the JSON form
 * are unchanged. Label values must come from a bounded set (route patterns, clusters, endpoints, codes).
 * A histogram whose counts are kept elsewhere (a pool's acquire waits) is given a `collect` that
 * replaces them with `setCounts` at scrape time, as prom-client's own metrics take `collect`.
 */
import type { Registry } from "prom-client";

interface Counts {
  readonly labels: Readonly<Record<string, string>>;
  /** Observations per bucket (not cumulative); the last slot counts those above every bound. */
  readonly perBucket: number[];
  sum: number;
  count: number;
}

interface ExportedValue {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName: string;
}

export class LabelledHistogram<L extends string> {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private root = new Map<string, unknown>();
  private all: Counts[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    private readonly buckets: readonly number[],
    registry: Registry,
    /** Called before every export: reads counts kept elsewhere into this histogram (setCounts). */
    private readonly collect?: () => void,
  ) {
    registry.registerMetric(this as unknown as Parameters<Registry["registerMetric"]>[0]);
  }

  observe(labels: Readonly<Record<L, string>>, value: number): void {
    const counts = this.countsFor(labels);
    const buckets = this.buckets;
    let i = 0;
    while (i < buckets.length && value > (buckets[i] as number)) i++;
    (counts.perBucket[i] as number)++;
    counts.sum += value;
    counts.count++;
  }

  /**
   * One label set's counts as kept elsewhere: observations per bucket (not cumulative, one more slot
   * than there are bounds, for those above every bound), their sum and their number.
   */
  setCounts(labels: Readonly<Record<L, string>>, perBucket: readonly number[], sum: number, count: number): void {
    if (perBucket.length !== this.buckets.length + 1) throw new Error(`${this.name}: ${perBucket.length} bucket counts for ${this.buckets.length} bounds`);
    const counts = this.countsFor(labels);
    for (let i = 0; i < perBucket.length; i++) counts.perBucket[i] = perBucket[i] as number;
    counts.sum = sum;
    counts.count = count;
  }

  private countsFor(labels: Readonly<Record<L, string>>): Counts {
    let level = this.root;
    const last = this.labelNames.length - 1;
    for (let i = 0; i < last; i++) {
      const value = labels[this.labelNames[i] as L];
      let next = level.get(value) as Map<string, unknown> | undefined;
      if (next === undefined) {
        next = new Map();
        level.set(value, next);
      }
      level = next;
    }
    const leaf = labels[this.labelNames[last] as L];
    let counts = level.get(leaf) as Counts | undefined;
    if (counts === undefined) {
      const copy: Record<string, string> = {};
      for (const name of this.labelNames) copy[name] = labels[name];
      counts = { labels: copy, perBucket: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
      level.set(leaf, counts);
      this.all.push(counts);
    }
    return counts;
  }

  /** prom-client's exposition path: bucket lines carry `le` in their own labels and the label set as shared labels. */
  getForPromString(): { name: string; help: string; type: string; values: ExportedValue[]; aggregator: string } {
    this.collect?.();
    const values: ExportedValue[] = [];
    for (const counts of this.all) {
      let cumulative = 0;
      for (const [i, bound] of this.buckets.entries()) {
        cumulative += counts.perBucket[i] as number;
        values.push({ labels: { le: bound }, sharedLabels: counts.labels, value: cumulative, metricName: `${this.name}_bucket` });
      }
      values.push({ labels: { le: "+Inf" }, sharedLabels: counts.labels, value: counts.count, metricName: `${this.name}_bucket` });
      values.push({ labels: {}, sharedLabels: counts.labels, value: counts.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: counts.labels, value: counts.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The JSON form (Registry.getMetricsAsJSON): labels and shared labels merged, as prom-client's Histogram answers. */
  get(): { name: string; help: string; type: string; values: ExportedValue[]; aggregator: string } {
    const data = this.getForPromString();
    data.values = data.values.map(({ labels, sharedLabels, value, metricName }) => ({ labels: { ...sharedLabels, ...labels }, value, metricName }));
    return data;
  }

  reset(): void {
    this.root = new Map();
    this.all = [];
  }
}
