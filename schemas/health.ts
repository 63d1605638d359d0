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
  resets: z.number().int().describe("Full session resets before a connection went to another principal"),
  releaseResets: z
    .number()
    .int()
    .describe("Resets when a connection came back from its caller: session-level locks released (after any statement), a transaction rolled back, or the full reset"),
  acquireWaitMs: z.object({
    count: z.number().int(),
    buckets: z.array(z.object({ le: z.number(), count: z.number().int() })).describe("Cumulative"),
    sumMs: z.number(),
    maxMs: z.number(),
  }),
});
export type PoolStats = z.infer<typeof poolStatsSchema>;

export const databaseStateSchema = z.object({
  status: z
    .enum(["up", "down", "unknown", "idle", "resuming"])
    .describe("idle: the gateway released every session (idleToZero) and the database may be paused, not an outage; resuming: requests wait for it to resume"),
  lastError: z.string().optional(),
  lastConnectedAt: z.string().optional(),
});

export const refusalSchema = z.object({ sqlstate: z.string(), message: z.string() });

export const endpointStatusSchema = z.object({
  name: z.string(),
  role: z.enum(["primary", "replica", "unknown"]),
  healthy: z.boolean(),
  lagMs: z.number().nullable().describe("Estimated replication lag; 0 when caught up"),
  banned: z.string().nullable().describe("Why the replica gets no reads, or null"),
  position: z
    .string()
    .nullable()
    .describe("WAL position: written on a primary, replayed on a replica; on Aurora PostgreSQL the writer's time (T + microseconds) up to which the instance has applied"),
  serverId: z.string().nullable().describe("The instance the last check reached, as the database names itself (Aurora's server id), or null"),
  listedLagMs: z
    .number()
    .nullable()
    .describe("The replica lag the cluster's instance list last gave for this instance (Aurora's replica_lag_in_msec, read by discovery), or null"),
  positionsRefused: refusalSchema.nullable().describe("The replication position functions were refused here (Aurora): SQLSTATE and message"),
  outstanding: z.number().int(),
  lastError: z.string().nullable(),
  pool: poolStatsSchema.describe("The read-write login's pool"),
  logins: z.record(z.string(), poolStatsSchema).optional().describe("With more than one database login: each login's pool"),
});

export const failoverSchema = z.object({
  startedAt: z.string(),
  reason: z.string(),
  oldPrimary: z.string().optional(),
  newPrimary: z.string().optional(),
  resolvedAt: z.string().optional(),
  durationMs: z.number().optional(),
  timeline: z.array(z.object({ at: z.string(), event: z.string() })),
});

export const topologySchema = z.object({
  primary: z.string().nullable(),
  endpoints: z.array(endpointStatusSchema),
  failovers: z.array(failoverSchema).describe("Recent failovers, oldest first"),
});

/** A cluster with clusters.<name>.idleToZero: whether its sessions are released so its database may pause. */
export const idleStatusSchema = z.object({
  state: z
    .enum(["active", "idle", "resuming"])
    .describe("active: sessions as usual; idle: every session released, the database may be paused (not an outage); resuming: requests wait for the database to resume"),
  since: z.string().describe("When the state began"),
  lastResumeMs: z.number().nullable().describe("How long the last resume took, first request to first connection"),
});
export type IdleStatus = z.infer<typeof idleStatusSchema>;

export const healthResponseSchema = z.object({
  status: z.enum(["ok", "draining"]),
  uptimeS: z.number(),
  clusters: z.record(
    z.string(),
    z.object({
      engine: z.string(),
      embedded: z.boolean(),
      database: databaseStateSchema,
      pool: poolStatsSchema.describe("The primary's pool (the writer's when no primary is known)"),
      openTransactions: z.number().int(),
      ...topologySchema.shape,
      idle: idleStatusSchema.nullable().describe("With clusters.<name>.idleToZero: idle state; null when the option is off"),
    }),
  ),
});
export type HealthResponse = z.infer<typeof healthResponseSchema>;

export const topologyResponseSchema = z.object({ clusters: z.record(z.string(), topologySchema) });
export type TopologyResponse = z.infer<typeof topologyResponseSchema>;

export const readyResponseSchema = z.object({ ready: z.boolean(), reason: z.string().optional() });

/** GET /livez: the process answers (starting, serving or draining alike). */
export const liveResponseSchema = z.object({ live: z.literal(true) });
