/**
 * The connection budget: how big each gateway task's pools may be so that, at the service's largest
 * size during a rolling deployment, the gateways never hold more connections on one Aurora instance
 * (or one Aurora DSQL cluster) than it allows. Checked at synth time, with a clear error.
 *
 * Aurora: per task, one instance can see two endpoints (the cluster endpoint and its own instance
 * endpoint, with topology discovery), each with a pool per database login plus a monitor session.
 * Aurora DSQL: one regional endpoint per task, under the cluster's connection quota. So:
 *   maxTasks × (maxHealthyPercent / 100) × endpoints × (logins × poolSize + 1) + reserved ≤ headroom × max_connections
 */

export type AuroraEngine = "postgres" | "mysql";
/** What the stack can deploy: an Aurora cluster of either engine, or an Aurora DSQL cluster. */
export type DatabaseEngine = AuroraEngine | "dsql";

/**
 * Aurora DSQL's default "Maximum connections per cluster" quota (Aurora DSQL User Guide, "Cluster
 * quotas and database limits": 10,000, adjustable; beyond it logins fail with 53300). Its other
 * connection quota — 100 new connections a second, bursts of 1,000 — is not a count the budget can
 * check; the pools open their sessions gradually (minIdle, then on demand), far below it.
 */
export const DSQL_MAX_CONNECTIONS = 10_000;

/**
 * Default `max_connections` of Aurora instance classes (AWS's parameter-group formulas evaluated per
 * class: PostgreSQL LEAST(DBInstanceClassMemory/9531392, 5000); MySQL's log-based formula).
 */
export const MAX_CONNECTIONS: Record<AuroraEngine, Record<string, number>> = {
  postgres: {
    "t4g.medium": 405,
    "r6g.large": 1660,
    "r6g.xlarge": 3300,
    "r6g.2xlarge": 5000,
    "r7g.large": 1660,
    "r7g.xlarge": 3300,
    "r7g.2xlarge": 5000,
  },
  mysql: {
    "t4g.medium": 90,
    "r6g.large": 1000,
    "r6g.xlarge": 2000,
    "r6g.2xlarge": 3000,
    "r7g.large": 1000,
    "r7g.xlarge": 2000,
    "r7g.2xlarge": 3000,
  },
};

/** Memory of the same instance classes, GiB (the FreeableMemory alarm's scale). */
export const INSTANCE_MEMORY_GIB: Record<string, number> = {
  "t4g.medium": 4,
  "r6g.large": 16,
  "r6g.xlarge": 32,
  "r6g.2xlarge": 64,
  "r7g.large": 16,
  "r7g.xlarge": 32,
  "r7g.2xlarge": 64,
};

export interface PoolBudgetInput {
  engine: DatabaseEngine;
  /** Instance class without the "db." prefix, e.g. "r6g.large" (Aurora; ignored for DSQL). */
  instanceClass?: string | undefined;
  maxTasks: number;
  /** ECS deployment maximumPercent (200 = a rolling deploy may double the task count). */
  maxHealthyPercent: number;
  /** Connections kept free for admin, migrations, monitoring and the canary. */
  reservedConnections: number;
  /** Share of max_connections the gateways may use (default 0.8). */
  headroom?: number;
  /** A pool size chosen by hand; checked instead of computed. */
  poolSize?: number;
  /** Database logins the gateway keeps pools for (1, or 2 with a read-only login; default 1). */
  logins?: number;
}

export interface PoolBudget {
  poolSize: number;
  maxConnections: number;
  /** Connections the gateways may hold on one instance at most. */
  worstCase: number;
  /** What the gateways may use: the ceiling minus the reserved connections. */
  limit: number;
  /** The share of max_connections meant to be used at all (gateways and reserved): above it, something is off. */
  ceiling: number;
}

export class PoolBudgetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PoolBudgetError";
  }
}

/** What the budget is measured against: the limit, what it limits, and the endpoints each task has there. */
interface ConnectionLimit {
  maxConnections: number;
  /** For messages: "db.r6g.large (Aurora postgres, max_connections 1660)". */
  describe: string;
  /** Endpoints a task may hold pools on that land on the limited thing. */
  endpointsPerTask: number;
  /** Advice when the budget does not fit. */
  larger: string;
}

function connectionLimit(input: PoolBudgetInput): ConnectionLimit {
  if (input.engine === "dsql") {
    return { maxConnections: DSQL_MAX_CONNECTIONS, describe: `the Aurora DSQL cluster (connection quota ${DSQL_MAX_CONNECTIONS})`, endpointsPerTask: 1, larger: "ask AWS for a higher connection quota" };
  }
  const instanceClass = input.instanceClass ?? "";
  const maxConnections = MAX_CONNECTIONS[input.engine][instanceClass];
  if (maxConnections === undefined) {
    throw new PoolBudgetError(
      `unknown instance class db.${instanceClass} for Aurora ${input.engine}; known: ${Object.keys(MAX_CONNECTIONS[input.engine]).map((name) => `db.${name}`).join(", ")}`,
    );
  }
  return { maxConnections, describe: `db.${instanceClass} (Aurora ${input.engine}, max_connections ${maxConnections})`, endpointsPerTask: 2, larger: "choose a larger instance class" };
}

/** Computes (or checks) the per-task pool size; throws PoolBudgetError when it cannot fit. */
export function poolBudget(input: PoolBudgetInput): PoolBudget {
  const { maxConnections, describe, endpointsPerTask, larger } = connectionLimit(input);
  const headroom = input.headroom ?? 0.8;
  const ceiling = Math.floor(headroom * maxConnections);
  const limit = ceiling - input.reservedConnections;
  const tasksAtPeak = Math.ceil((input.maxTasks * input.maxHealthyPercent) / 100);
  const logins = input.logins ?? 1;
  const perTaskConnections = (poolSize: number) => endpointsPerTask * (logins * poolSize + 1);
  const largest = Math.floor((Math.floor(limit / tasksAtPeak / endpointsPerTask) - 1) / logins);
  const poolSize = input.poolSize ?? Math.min(largest, 50);
  const worstCase = tasksAtPeak * perTaskConnections(poolSize);
  if (poolSize < 1 || worstCase > limit) {
    throw new PoolBudgetError(
      `connection budget exceeded on ${describe}: ` +
        `${input.maxTasks} tasks × ${input.maxHealthyPercent}% during deployments × ${endpointsPerTask} × (${logins === 1 ? "" : `${logins} logins × `}pool ${poolSize} + 1 monitor) = ${worstCase} connections, ` +
        `but only ${limit} are available (${Math.round(headroom * 100)}% of the limit minus ${input.reservedConnections} reserved). ` +
        `Lower maxTasks or the pool size, or ${larger}${largest >= 1 ? ` (the largest pool that fits is ${largest})` : ""}.`,
    );
  }
  return { poolSize, maxConnections, worstCase, limit, ceiling };
}
