import { describe, expect, it } from "vitest";
import type { PoolStats } from "../../schemas/health.js";
import { PoolCounters } from "../pool/stats.js";
import { EmfReporter, quantileFromBuckets } from "./emf-reporter.js";

function stats(counters: PoolCounters, gauges: Partial<PoolStats> = {}): PoolStats {
  return { total: 4, active: 1, idle: 3, waiting: 0, pendingCreates: 0, created: 4, evicted: 0, retired: 0, resets: 0, releaseResets: 0, acquireWaitMs: counters.acquireWait(), ...gauges };
}

describe("EMF pool metrics", () => {
  it("finds a quantile's bucket", () => {
    expect(quantileFromBuckets([1, 10, 100], [98, 1, 1], 0, 0.99)).toBe(10);
    expect(quantileFromBuckets([1, 10, 100], [0, 0, 0], 0, 0.99)).toBe(0);
    expect(quantileFromBuckets([1, 10, 100], [1, 0, 0], 99, 0.99)).toBe(200);
  });

  it("reports each interval's acquire waits per endpoint as an EMF document", () => {
    const counters = new PoolCounters();
    const lines: string[] = [];
    let gauges: Partial<PoolStats> = {};
    const reporter = new EmfReporter(
      { intervalMs: 60000, namespace: "Poolgate" },
      () => [{ cluster: "default", endpoint: "default/writer", stats: stats(counters, gauges) }],
      (line) => lines.push(line),
      () => 1_700_000_000_000,
    );
    for (let i = 0; i < 50; i++) counters.recordAcquireWait(0.05);
    reporter.report(); // baseline
    for (let i = 0; i < 98; i++) counters.recordAcquireWait(0.3);
    counters.recordAcquireWait(40);
    counters.recordAcquireWait(400);
    gauges = { waiting: 7, active: 4, idle: 0 };
    reporter.report();
    const document = JSON.parse(lines[1] ?? "{}");
    expect(document).toMatchObject({
      cluster: "default",
      endpoint: "default/writer",
      PoolAcquires: 100,
      PoolAcquireWaitP99: 50,
      PoolWaiting: 7,
      PoolActive: 4,
      _aws: { Timestamp: 1_700_000_000_000, CloudWatchMetrics: [{ Namespace: "Poolgate", Dimensions: [["cluster", "endpoint"]] }] },
    });
    expect(document.PoolAcquireWaitMean).toBeCloseTo((98 * 0.3 + 40 + 400) / 100, 5);
    expect(document._aws.CloudWatchMetrics[0].Metrics.map((metric: { Name: string }) => metric.Name)).toContain("PoolAcquireWaitP99");
  });

  it("reports the gateway's requests, errors, retries and failovers per interval when given totals", () => {
    const lines: string[] = [];
    const totals = { requests: 10, clientErrors: 1, serverErrors: 0, retries: 2, failovers: 0, cacheReads: 0, cacheHits: 0 };
    const reporter = new EmfReporter({ intervalMs: 60000, namespace: "Poolgate" }, () => [], (line) => lines.push(line), () => 1, () => totals);
    reporter.report();
    Object.assign(totals, { requests: 25, clientErrors: 4, serverErrors: 2, retries: 2, failovers: 1 });
    reporter.report();
    expect(JSON.parse(lines[1] ?? "{}")).toMatchObject({
      service: "poolgate",
      Requests: 15,
      ClientErrors: 3,
      ServerErrors: 2,
      Retries: 0,
      Failovers: 1,
      _aws: { CloudWatchMetrics: [{ Namespace: "Poolgate", Dimensions: [["service"]] }] },
    });
  });
});
