/**
 * Query insights in Prometheus form, with bounded cardinality: gauges over the last
 * insights.metricsWindowMs for the insights.metricsTop (cluster, principal, fingerprint) rows with the
 * most total time, read from the insights at scrape time. A row that leaves the top leaves the
 * exposition; the full picture is GET /v1/admin/insights.
 */
import { Gauge, type Registry } from "prom-client";
import type { InsightsConfig } from "../config/schema.js";
import type { InsightRow, QueryInsights } from "./query-insights.js";

const LABELS = ["cluster", "principal", "fingerprint"] as const;

export function registerInsightMetrics(registry: Registry, insights: QueryInsights, settings: InsightsConfig): void {
  if (!settings.enabled) return;
  const registers = [registry];
  const window = `${Math.round(settings.metricsWindowMs / 1000)}s`;
  const top = (): InsightRow[] => insights.top(settings.metricsTop, settings.metricsWindowMs);
  const perRow = (name: string, help: string, read: (row: InsightRow) => number): void => {
    new Gauge({
      name,
      help: `${help}, over the last ${window}, for the top ${settings.metricsTop} statements by total time`,
      labelNames: LABELS,
      registers,
      collect() {
        this.reset();
        for (const row of top()) this.set({ cluster: row.cluster, principal: row.principal, fingerprint: row.fingerprint }, read(row));
      },
    });
  };
  perRow("poolgate_insight_calls", "Calls of a statement fingerprint by a principal", (row) => row.stats.calls);
  perRow("poolgate_insight_errors", "Failed calls of a statement fingerprint by a principal", (row) => row.stats.errorCount);
  perRow("poolgate_insight_seconds", "Total time of a statement fingerprint's calls by a principal", (row) => row.stats.totalMs / 1000);
  perRow("poolgate_insight_database_seconds", "Of that, time on a database session", (row) => row.stats.databaseMs / 1000);
  perRow("poolgate_insight_p99_seconds", "99th percentile of a call's time", (row) => row.stats.percentileMs(0.99) / 1000);
}
