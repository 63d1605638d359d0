/**
 * Wire types of `GET /v1/admin/insights`: query insights per principal — for each (cluster,
 * principal), its statements grouped by fingerprint with their figures over a time window — and the
 * query string that filters them.
 */
import { z } from "zod";

export const insightsQuerySchema = z.strictObject({
  principal: z.string().min(1).optional().describe("Only this principal"),
  cluster: z.string().min(1).optional().describe("Only this cluster"),
  since: z.iso.datetime({ offset: true }).optional().describe("Window start (ISO 8601); default: as far back as figures are kept (insights.retainMs)"),
  until: z.iso.datetime({ offset: true }).optional().describe("Window end (ISO 8601); default: now"),
  limit: z.coerce.number().int().min(1).max(1000).optional().describe("Fingerprints listed per principal (the rest merged into `(other)`); default: insights.topPerPrincipal"),
});
export type InsightsQuery = z.infer<typeof insightsQuerySchema>;

export const insightStatementSchema = z.object({
  fingerprint: z.string().describe("Equal for statements that differ only in literals; `(other)` for those past the per-principal limit"),
  sample: z.string().describe("One text of the fingerprint with its literals replaced by placeholders"),
  calls: z.number().int(),
  errors: z.record(z.string(), z.number().int()).describe("Failed calls by code (registry code; DATABASE_ERROR/<SQLSTATE> for database errors)"),
  rows: z.number().int().describe("Rows returned or changed"),
  totalMs: z.number(),
  meanMs: z.number(),
  p99Ms: z.number().describe("99th percentile of a call's time (at most 10% above the true value)"),
  waitMs: z.number().describe("Of totalMs, time not on a database session: routing, failover holds, the pool's queue, retries' backoff"),
  databaseMs: z.number().describe("Of totalMs, time on a database session"),
  lastSeen: z.string().describe("ISO 8601"),
});
export type InsightStatement = z.infer<typeof insightStatementSchema>;

export const insightPrincipalSchema = z.object({
  cluster: z.string(),
  principal: z.string().describe("`(other)` for principals past insights.maxPrincipals"),
  calls: z.number().int(),
  totalMs: z.number(),
  statements: z.array(insightStatementSchema).describe("By total time, most first"),
});
export type InsightPrincipal = z.infer<typeof insightPrincipalSchema>;

export const insightsResponseSchema = z.object({
  enabled: z.boolean().describe("false: insights.enabled is off and nothing is counted"),
  generatedAt: z.string(),
  since: z.string().describe("The window read, widened to whole slices (insights.sliceMs)"),
  until: z.string(),
  principals: z.array(insightPrincipalSchema).describe("By total time, most first"),
});
export type InsightsResponse = z.infer<typeof insightsResponseSchema>;
