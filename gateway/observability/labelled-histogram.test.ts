import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { LabelledHistogram } from "./labelled-histogram.js";

const BUCKETS = [0.001, 0.01, 0.1, 1];
const LABELS = ["route", "outcome"] as const;

/** The same observations into prom-client's own Histogram and into ours, each in a registry of its own. */
function both(observations: [Record<(typeof LABELS)[number], string>, number][]) {
  const theirs = new Registry();
  const reference = new Histogram({ name: "h_seconds", help: "help text", labelNames: [...LABELS], buckets: BUCKETS, registers: [theirs] });
  const ours = new Registry();
  const histogram = new LabelledHistogram("h_seconds", "help text", LABELS, BUCKETS, ours);
  for (const [labels, value] of observations) {
    reference.observe(labels, value);
    histogram.observe(labels, value);
  }
  return { theirs, ours, histogram };
}

describe("LabelledHistogram", () => {
  const observations: [Record<(typeof LABELS)[number], string>, number][] = [
    [{ route: "/v1/query", outcome: "ok" }, 0.0004],
    [{ route: "/v1/query", outcome: "ok" }, 0.001],
    [{ route: "/v1/query", outcome: "ok" }, 0.05],
    [{ route: "/v1/query", outcome: "SERIALIZATION_FAILURE" }, 2.5],
    [{ route: "/v1/batch", outcome: "ok" }, 0.1],
    [{ route: '/v1/"quoted"\\path', outcome: "ok" }, 0.02],
  ];

  it("exports the same text as prom-client's Histogram for the same observations", async () => {
    const { theirs, ours } = both(observations);
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it("answers the same JSON form (less prom-client's empty exemplar slots: exemplars are off)", async () => {
    const { theirs, ours } = both(observations);
    const reference = (await theirs.getMetricsAsJSON()).map((metric) => ({
      ...metric,
      values: metric.values.map((value) => {
        const { exemplar, ...rest } = value as typeof value & { exemplar?: unknown };
        expect(exemplar ?? null).toBeNull();
        return rest;
      }),
    }));
    expect(await ours.getMetricsAsJSON()).toEqual(reference);
  });

  it("counts a value on a bucket's bound in that bucket, and one above every bound only in +Inf", async () => {
    const { ours } = both([
      [{ route: "r", outcome: "ok" }, 0.01],
      [{ route: "r", outcome: "ok" }, 7],
    ]);
    const text = await ours.metrics();
    expect(text).toContain('h_seconds_bucket{le="0.001",route="r",outcome="ok"} 0');
    expect(text).toContain('h_seconds_bucket{le="0.01",route="r",outcome="ok"} 1');
    expect(text).toContain('h_seconds_bucket{le="1",route="r",outcome="ok"} 1');
    expect(text).toContain('h_seconds_bucket{le="+Inf",route="r",outcome="ok"} 2');
    expect(text).toContain('h_seconds_sum{route="r",outcome="ok"} 7.01');
    expect(text).toContain('h_seconds_count{route="r",outcome="ok"} 2');
  });

  it("starts empty again after reset, and keeps the caller's label object out of its state", async () => {
    const { ours, histogram } = both([]);
    const labels = { route: "r", outcome: "ok" };
    histogram.observe(labels, 0.5);
    labels.outcome = "changed";
    expect(await ours.metrics()).toContain('h_seconds_count{route="r",outcome="ok"} 1');
    histogram.reset();
    expect(await ours.metrics()).not.toContain("h_seconds_count");
  });

  it("exports counts kept elsewhere, read at every scrape through collect, as prom-client would the same observations", async () => {
    // A keeper of its own (a pool's acquire-wait counters): per-bucket counts, one slot above every bound.
    const kept = new Map<string, { perBucket: number[]; sum: number; count: number }>();
    const keep = (route: string, value: number) => {
      const counts = kept.get(route) ?? { perBucket: new Array<number>(BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
      let i = 0;
      while (i < BUCKETS.length && value > (BUCKETS[i] as number)) i++;
      counts.perBucket[i] = (counts.perBucket[i] as number) + 1;
      counts.sum += value;
      counts.count++;
      kept.set(route, counts);
    };
    const ours = new Registry();
    const histogram: LabelledHistogram<"route" | "outcome"> = new LabelledHistogram("h_seconds", "help text", LABELS, BUCKETS, ours, () => {
      histogram.reset();
      for (const [route, { perBucket, sum, count }] of kept) histogram.setCounts({ route, outcome: "ok" }, perBucket, sum, count);
    });
    const okOnly = observations.filter(([labels]) => labels.outcome === "ok");
    for (const [labels, value] of okOnly) keep(labels.route, value);
    expect(await ours.metrics()).toBe(await both(okOnly).theirs.metrics());
    // Read afresh at the next scrape, not frozen at the first.
    keep("/v1/query", 0.2);
    expect(await ours.metrics()).toBe(await both([...okOnly, [{ route: "/v1/query", outcome: "ok" }, 0.2]]).theirs.metrics());
    expect(() => histogram.setCounts({ route: "r", outcome: "ok" }, [1, 2], 0, 3)).toThrow(/bucket counts/);
  });
});
