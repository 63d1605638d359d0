/**
 * Wire type of `GET /v1/admin/status`: what the live status page (`GET /`) draws — the topology of
 * every cluster, its pools, recent failovers, and a short per-second history of requests, errors and
 * pool use for the charts.
 */
import { z } from "zod";
import { failoverSchema, idleStatusSchema, refusalSchema } from "./health.js";
import { insightStatementSchema } from "./insights.js";

export const statusEndpointSchema = z.object({
  name: z.string(),
  role: z.enum(["primary", "replica", "unknown"]),
  healthy: z.boolean(),
  lagMs: z.number().nullable().describe("Estimated replication lag; null while the endpoint is unreachable"),
  lastError: z.string().nullable().describe("Why the last check failed, while the endpoint is unreachable"),
  banned: z.string().nullable().describe("Why the replica gets no reads, or null"),
  positionsRefused: refusalSchema.nullable().describe("The replication position functions were refused here (Aurora): SQLSTATE and message"),
  outstanding: z.number().int().describe("Requests routed here and not yet answered"),
  pool: z.object({ total: z.number().int(), active: z.number().int(), idle: z.number().int(), waiting: z.number().int(), maxSize: z.number().int() }),
});

export const statusSampleSchema = z.object({
  at: z.number().describe("Epoch milliseconds"),
  requests: z.number().int().describe("Requests answered since start (cumulative)"),
  clientErrors: z.number().int().describe("4xx answers since start (cumulative)"),
  serverErrors: z.number().int().describe("5xx answers since start (cumulative)"),
  pools: z.record(z.string(), z.object({ active: z.number().int(), idle: z.number().int(), waiting: z.number().int() })).describe("By endpoint name"),
});
export type StatusSample = z.infer<typeof statusSampleSchema>;

export const statusResponseSchema = z.object({
  generatedAt: z.string(),
  version: z.string(),
  status: z.enum(["ok", "draining"]),
  uptimeS: z.number(),
  totals: z.object({
    requests: z.number().int(),
    clientErrors: z.number().int(),
    serverErrors: z.number().int(),
    retries: z.number().int(),
    failovers: z.number().int(),
    cacheReads: z.number().int().describe("Reads that asked for the result cache"),
    cacheHits: z.number().int().describe("Of those, answered from it (hit or stale)"),
  }),
  clusters: z.record(
    z.string(),
    z.object({
      engine: z.string(),
      primary: z.string().nullable(),
      openTransactions: z.number().int(),
      endpoints: z.array(statusEndpointSchema),
      failovers: z.array(failoverSchema).describe("Recent failovers, oldest first"),
      idle: idleStatusSchema.nullable().optional().describe("With clusters.<name>.idleToZero: idle state (the page says the database may be paused, not an outage)"),
    }),
  ),
  history: z.array(statusSampleSchema).describe("One sample a second, oldest first (the last five minutes)"),
  insights: z
    .object({
      enabled: z.boolean(),
      windowMs: z.number().int().describe("The window the rows describe (insights.metricsWindowMs)"),
      top: z
        .array(insightStatementSchema.extend({ cluster: z.string(), principal: z.string() }))
        .describe("The statements with the most total time in the window, across principals (at most 10)"),
    })
    .describe("Query insights' top statements (GET /v1/admin/insights has them all)"),
});
export type StatusResponse = z.infer<typeof statusResponseSchema>;
