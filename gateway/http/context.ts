/** What the HTTP routes need from the rest of the gateway, passed explicitly. */
import type { AccessPolicy } from "../auth/access-policy.js";
import type { Caller } from "../auth/caller.js";
import type { Cluster } from "../clusters/cluster.js";
import type { GatewayConfig } from "../config/schema.js";
import type { DataApiService } from "../data-api/service.js";
import type { RunAs } from "../execution/run-as.js";
import type { TransactionOwnership } from "../peers/transaction-ownership.js";
import { GatewayError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { GatewayMetrics } from "../observability/metrics.js";
import type { QueryInsights } from "../observability/query-insights.js";
import type { GatewayTracing } from "../observability/tracing.js";
import type { StatusHistory } from "../observability/status-history.js";

export interface HttpContext {
  config: GatewayConfig;
  clusters: ReadonlyMap<string, Cluster>;
  logger: Logger;
  startedAt: number;
  isDraining(): boolean;
  /** Start-up finished (the pools warmed, or gave up waiting): /readyz may answer 200. */
  isReady(): boolean;
  /** The RDS Data API surface, on the same clusters. */
  dataApi: DataApiService;
  /** With a peer key: which task owns a transaction id. */
  ownership?: TransactionOwnership | undefined;
  /** What each principal may do. */
  policy: AccessPolicy;
  /** The metrics registry (GET /metrics) and request totals. */
  metrics: GatewayMetrics;
  /** The last minutes of requests and pool use, for the status page. */
  history: StatusHistory;
  /** Query insights per principal (GET /v1/admin/insights). */
  insights: QueryInsights;
  /** The tracer; undefined with tracing off (no hook is registered then). */
  tracing?: GatewayTracing | undefined;
  version: string;
}

/** A cluster as one caller may use it. */
export interface ClusterAccess {
  cluster: Cluster;
  runAs: RunAs;
}

/** The named (or default) cluster, if the caller has access to it. */
export function selectCluster(context: HttpContext, caller: Caller, name: string | undefined): ClusterAccess {
  const cluster = clusterNamed(context, name);
  return { cluster, runAs: context.policy.runAs(caller, cluster.name) };
}

/** The named (or default) cluster; INVALID_REQUEST when there is none of that name. */
export function clusterNamed(context: HttpContext, name: string | undefined): Cluster {
  if (context.isDraining()) throw new GatewayError("GATEWAY_DRAINING", "the gateway is shutting down; retry against another instance");
  const wanted = name ?? context.config.defaultCluster;
  const cluster = context.clusters.get(wanted);
  if (!cluster) {
    throw new GatewayError("INVALID_REQUEST", `unknown cluster "${wanted}"; configured: ${[...context.clusters.keys()].join(", ")}`, {
      issues: [{ path: "cluster", message: "unknown cluster" }],
    });
  }
  return cluster;
}

/**
 * The cluster of an interactive transaction: the one the request names, else the one that issued the
 * id (transaction ids are unique across clusters), else the default (which answers "not found").
 */
export function selectTransactionCluster(context: HttpContext, caller: Caller, transactionId: string, name: string | undefined): ClusterAccess {
  if (name === undefined) {
    for (const cluster of context.clusters.values()) {
      if (cluster.transactions.knows(transactionId)) return selectCluster(context, caller, cluster.name);
    }
  }
  return selectCluster(context, caller, name);
}

