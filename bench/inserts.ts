/**
 * Report 4: sequential inserts by one caller, pooled against a new connection each. The pooled
 * targets run the full count (100,000 by default); a new connection per insert runs a sample and is
 * extrapolated to the full count (100,000 connections would take minutes), and says so. Each target
 * starts from an empty (unlogged) table, so the disk's WAL flush does not decide the per-insert cost.
 */
import { truncateInserts } from "./databases.js";
import type { InsertRow } from "./results.js";
import type { Target } from "./targets.js";

/** The targets that break the gateway's sequential insert down into its parts (report.ts reads them by name). */
export const INSERT_PARTS = {
  http: "HTTP round trip alone (echo server)",
  database: "in-process gateway engine, insert + its token",
} as const;

export interface InsertPlan {
  target: Target;
  /** How many inserts to run: the full count, or a sample to extrapolate from. */
  run: number;
}

export async function runInserts(
  plans: InsertPlan[],
  count: number,
  benchUrl: string,
  step: (label: string, estimateS: number, work: () => Promise<void>) => Promise<void>,
  estimateS: (plan: InsertPlan) => number,
): Promise<InsertRow[]> {
  const rows: InsertRow[] = [];
  for (const plan of plans) {
    const label = `${plan.target.name}: ${plan.run.toLocaleString("en-US")} inserts${plan.run < count ? " (sample)" : ""}`;
    await step(label, estimateS(plan), async () => {
      await truncateInserts(benchUrl);
      const result = await plan.target.run({ statement: "insert", dialect: "postgres", callers: 1, requestsPerCaller: plan.run, warmupMs: 0 });
      const perInsertUs = (result.elapsedMs * 1000) / Math.max(1, result.requests + result.errors);
      rows.push({
        target: plan.target.name,
        role: plan.target.role,
        ran: plan.run,
        count,
        extrapolated: plan.run < count,
        totalMs: (perInsertUs * count) / 1000,
        perInsertUs,
        errors: result.errors,
        firstError: result.firstError,
      });
    });
  }
  await truncateInserts(benchUrl);
  return rows;
}
