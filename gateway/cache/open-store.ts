/** The store the config names, shared by every cluster of the gateway. */
import type { Clock } from "../clock.js";
import type { GatewayConfig } from "../config/schema.js";
import type { Logger } from "../logger.js";
import { MemoryStore } from "./memory-store.js";
import type { CacheStore } from "./store.js";
import { ValkeyStore } from "./valkey-store.js";

export function openCacheStore(config: GatewayConfig, clusters: readonly string[], clock: Clock, logger: Logger): CacheStore {
  const { cache } = config;
  if (cache.store === "memory" || cache.valkey === undefined) return new MemoryStore(cache.maxBytes, clock);
  const store = new ValkeyStore(cache.valkey, clusters, logger);
  store.start();
  return store;
}
