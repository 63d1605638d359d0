/**
 * What a result cache needs from where entries and generations live (memory-store.ts in one task,
 * valkey-store.ts shared by many): the mechanism. Which generations to read or bump, and when an
 * entry may be served, is the result cache's policy (result-cache.ts, dependencies.ts).
 */

import type { Entry } from "./entry.js";

/** An entry and the current generations of its dependencies, read together. */
export interface Lookup {
  entry: Entry | undefined;
  /** The store's own epoch first, then one value per dependency asked for, in order. */
  generations: string[];
}

export interface CacheStore {
  /** "memory" or "valkey", for logs and the status page. */
  readonly kind: string;
  /**
   * The entry under `key` and the generations of `dependencies` (names within `cluster`), in one round
   * trip; undefined when the store cannot answer now (the cache is bypassed).
   */
  lookup(cluster: string, key: string, dependencies: readonly string[]): Promise<Lookup | undefined>;
  /**
   * The same, answered in this turn, for a store that holds entries in the task (memory): a hit then
   * takes no promise and no turn (docs/performance.md, "No promise or turn of its own"). Absent where
   * every lookup waits (Valkey).
   */
  lookupNow?(cluster: string, key: string, dependencies: readonly string[]): Lookup;
  /** Keeps an entry for `ttlMs`; a failure only loses the entry. A shared store encodes it (entry.ts). */
  store(cluster: string, key: string, entry: Entry, ttlMs: number): Promise<void>;
  /**
   * Moves the generations on, before the write is acknowledged. False when the store could not
   * confirm it: the store then stops vouching for any entry until its epoch has moved on.
   */
  bump(cluster: string, dependencies: readonly string[]): Promise<boolean>;
  /** Bytes held (memory) or undefined (the store's own business). */
  bytes(): number | undefined;
  close(): Promise<void>;
}
