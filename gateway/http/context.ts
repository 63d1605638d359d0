/** What the HTTP routes need from the rest of the gateway, passed explicitly. */
import type { Cluster } from "../clusters/cluster.js";
import type { GatewayConfig } from "../config/schema.js";
import { GatewayError } from "../errors.js";
import type { Logger } from "../observability/logger.js";

export interface HttpContext {
  config: GatewayConfig;
  clusters: ReadonlyMap<string, Cluster>;
  logger: Logger;
  startedAt: number;
  isDraining(): boolean;
}

export function selectCluster(context: HttpContext, name: string | undefined): Cluster {
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
