/** Wire types of `/healthz` and `/readyz`. */
import { z } from "zod";

export const poolStatsSchema = z.object({
  total: z.number().int(),
  active: z.number().int(),
  idle: z.number().int(),
  waiting: z.number().int(),
  pendingCreates: z.number().int(),
  created: z.number().int(),
  evicted: z.number().int().describe("Closed because broken or failed validation"),
  retired: z.number().int().describe("Closed because of max lifetime, idle timeout or session reset failure"),
  acquireWaitMs: z.object({
    count: z.number().int(),
    buckets: z.array(z.object({ le: z.number(), count: z.number().int() })).describe("Cumulative"),
    sumMs: z.number(),
    maxMs: z.number(),
  }),
});
export type PoolStats = z.infer<typeof poolStatsSchema>;

export const databaseStateSchema = z.object({
  status: z.enum(["up", "down", "unknown"]),
  lastError: z.string().optional(),
  lastConnectedAt: z.string().optional(),
});

export const healthResponseSchema = z.object({
  status: z.enum(["ok", "draining"]),
  uptimeS: z.number(),
  clusters: z.record(
    z.string(),
    z.object({
      engine: z.string(),
      embedded: z.boolean(),
      database: databaseStateSchema,
      pool: poolStatsSchema,
      openTransactions: z.number().int(),
    }),
  ),
});
export type HealthResponse = z.infer<typeof healthResponseSchema>;

export const readyResponseSchema = z.object({ ready: z.boolean(), reason: z.string().optional() });
