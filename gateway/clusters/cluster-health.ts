/** One cluster's part of GET /health and the status page: its database, pools, endpoints and failovers. */
import type { HealthResponse } from "../../schemas/health.js";
import type { LoginKey } from "../credentials/logins.js";
import type { Engine } from "../engines/engine.js";
import type { Pool } from "../pool/pool.js";
import type { PoolSet } from "../pool/pool-set.js";
import type { Endpoint } from "../topology/endpoint.js";
import type { TopologyMonitor } from "../topology/monitor.js";
import type { Topology } from "../topology/topology.js";
import type { IdleToZero } from "./idle-to-zero.js";

/** What the report reads of a cluster (cluster.ts), named here so that the two files do not import each other. */
export interface HealthSource {
  readonly engine: Engine;
  readonly embedded: boolean;
  readonly endpoints: readonly Endpoint[];
  readonly writer: Endpoint;
  readonly pools: PoolSet<Endpoint>;
  readonly topology: Topology;
  readonly monitor: TopologyMonitor | undefined;
  readonly transactions: { readonly size: number };
  readonly idleToZero: IdleToZero | undefined;
  poolOf(endpoint: Endpoint, login?: LoginKey): Pool;
}

export function clusterHealth(cluster: HealthSource): HealthResponse["clusters"][string] {
  const primary = cluster.topology.primary();
  return {
    engine: cluster.engine.kind,
    embedded: cluster.embedded,
    database: databaseState(cluster),
    pool: cluster.poolOf(primary ?? cluster.writer).stats(),
    openTransactions: cluster.transactions.size,
    primary: primary?.name ?? null,
    endpoints: cluster.endpoints.map((endpoint) => ({
      name: endpoint.name,
      role: endpoint.role,
      healthy: endpoint.healthy,
      lagMs: endpoint.lagMs,
      banned: endpoint.banReason,
      position: endpoint.position,
      serverId: endpoint.serverId,
      listedLagMs: endpoint.listedLagMs,
      positionsRefused: endpoint.positionsRefused,
      outstanding: endpoint.outstanding,
      lastError: endpoint.lastError ?? null,
      pool: cluster.poolOf(endpoint).stats(),
      ...(cluster.pools.logins.length > 1 ? { logins: Object.fromEntries([...cluster.pools.of(endpoint)].map(([login, pool]) => [login, pool.stats()])) } : {}),
    })),
    failovers: cluster.monitor?.failovers ?? [],
    idle: cluster.idleToZero?.status() ?? null,
  };
}

/** The writer pool's account of the database; an idle cluster's database may be paused, which is no outage. */
function databaseState(cluster: HealthSource): HealthResponse["clusters"][string]["database"] {
  const state = cluster.poolOf(cluster.writer).databaseState();
  const idle = cluster.idleToZero?.status().state;
  if (idle === "idle" || idle === "resuming") state.status = idle;
  return state;
}
