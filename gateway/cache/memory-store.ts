/**
 * The embedded default: entries in this task's memory, least recently used first out when their bytes
 * pass the bound, and the generations as plain counters (one task sees all of its own writes, so it
 * has no epoch to lose). An expired entry is dropped when it is next looked up or pushed out. Entries
 * are kept as they are, never encoded: a hit reads no header text back (entry.ts is Valkey's).
 */
import type { Clock } from "../clock.js";
import type { Entry } from "./entry.js";
import type { CacheStore, Lookup } from "./store.js";

interface Held {
  entry: Entry;
  /** Counted once, when stored. */
  bytes: number;
  expiresAt: number;
}

/** JavaScript strings: two bytes a character (key and body), plus the header's object; close enough for a bound. */
const bytesOf = (key: string, entry: Entry): number => 2 * (key.length + entry.body.length) + 96 + 16 * entry.header.g.length;

export class MemoryStore implements CacheStore {
  readonly kind = "memory";
  private readonly entries = new Map<string, Held>();
  private readonly generations = new Map<string, number>();
  private held = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly clock: Clock,
  ) {}

  lookup(cluster: string, key: string, dependencies: readonly string[]): Promise<Lookup> {
    return Promise.resolve(this.lookupNow(cluster, key, dependencies));
  }

  lookupNow(cluster: string, key: string, dependencies: readonly string[]): Lookup {
    const id = `${cluster}\u0000${key}`;
    const held = this.entries.get(id);
    let entry: Entry | undefined;
    if (held !== undefined) {
      this.entries.delete(id);
      if (held.expiresAt > this.clock.wallNow()) {
        // Re-inserted: Map order is the recency order.
        this.entries.set(id, held);
        entry = held.entry;
      } else this.held -= held.bytes;
    }
    const generations = ["0"];
    for (const name of dependencies) generations.push(String(this.generations.get(`${cluster}\u0000${name}`) ?? 0));
    return { entry, generations };
  }

  store(cluster: string, key: string, entry: Entry, ttlMs: number): Promise<void> {
    const id = `${cluster}\u0000${key}`;
    const size = bytesOf(id, entry);
    if (size > this.maxBytes) return Promise.resolve();
    const previous = this.entries.get(id);
    if (previous !== undefined) {
      this.entries.delete(id);
      this.held -= previous.bytes;
    }
    this.entries.set(id, { entry, bytes: size, expiresAt: this.clock.wallNow() + ttlMs });
    this.held += size;
    for (const [oldest, held] of this.entries) {
      if (this.held <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.held -= held.bytes;
    }
    return Promise.resolve();
  }

  bump(cluster: string, dependencies: readonly string[]): Promise<boolean> {
    for (const name of dependencies) {
      const id = `${cluster}\u0000${name}`;
      this.generations.set(id, (this.generations.get(id) ?? 0) + 1);
    }
    return Promise.resolve(true);
  }

  bytes(): number {
    return this.held;
  }

  close(): Promise<void> {
    this.entries.clear();
    this.held = 0;
    return Promise.resolve();
  }
}
