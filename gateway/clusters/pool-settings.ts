/**
 * The pool settings of one cluster from the configuration: the read-write login's (pool.*; the
 * embedded PostgreSQL is a single session, so its pool has exactly one connection) and the other
 * logins' (clusters.<name>.logins sizes, within the same bounds).
 */
import type { GatewayConfig } from "../config/schema.js";
import type { PoolSettings } from "../pool/pool.js";

export function poolSettings(config: GatewayConfig, embedded: boolean): PoolSettings {
  const pool = config.pool;
  const maxSize = embedded ? 1 : pool.maxSize;
  return {
    ...pool,
    maxSize,
    minIdle: embedded ? 1 : (pool.minIdle ?? pool.maxSize),
  };
}

/** The pools of the cluster's other logins (read-only, per principal): their own sizes where configured. */
export function loginPoolSettings(config: GatewayConfig, cluster: string, readWrite: PoolSettings): PoolSettings {
  const logins = config.clusters[cluster]?.logins;
  const maxSize = logins?.maxSize ?? readWrite.maxSize;
  return {
    ...readWrite,
    maxSize,
    minIdle: Math.min(logins?.minIdle ?? readWrite.minIdle, maxSize),
  };
}
