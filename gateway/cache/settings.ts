/** A cluster's cache settings: the gateway-wide values with the cluster's own over them. */
import type { GatewayConfig } from "../config/schema.js";
import type { ClusterCacheSettings } from "./result-cache.js";

export function clusterCacheSettings(config: GatewayConfig, cluster: string): ClusterCacheSettings {
  const { cache } = config;
  const own = cache.clusters[cluster] ?? {};
  return {
    enabled: own.enabled ?? cache.enabled,
    maxTtlMs: own.maxTtlMs ?? cache.maxTtlMs,
    maxStaleWhileRevalidateMs: own.maxStaleWhileRevalidateMs ?? cache.maxStaleWhileRevalidateMs,
    sharePrincipals: own.sharePrincipals ?? cache.sharePrincipals,
    invalidation: own.invalidation ?? cache.invalidation,
    maxEntryBytes: cache.maxEntryBytes,
  };
}
