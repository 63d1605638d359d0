/**
 * The embedded default: entries in this task's memory, least recently used first out when their bytes
 * pass the bound, and the generations as plain counters (one task sees all of its own writes, so it
 * has no epoch to lose). An expired entry is dropped when it is next looked up or pushed out.
 */
import type { Clock } from "../clock.js";
import type { CacheStore, Lookup } from "./store.js";

interface Held {
  text: string;
  expiresAt: number;
}

/** JavaScript strings: two bytes a character, plus the key; close enough for a bound. */
const bytesOf = (key: string, text: string): number => 2 * (key.length + text.length);

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
    const id = `${cluster}\u0000${key}`;
    const held = this.entries.get(id);
    let entry: string | undefined;
    if (held !== undefined) {
      this.entries.delete(id);
      if (held.expiresAt > this.clock.wallNow()) {
        // Re-inserted: Map order is the recency order.
        this.entries.set(id, held);
        entry = held.text;
      } else this.held -= bytesOf(id, held.text);
    }
    const generations = ["0", ...dependencies.map((name) => String(this.generations.get(`${cluster}\u0000${name}`) ?? 0))];
    return Promise.resolve({ entry, generations });
  }

  store(cluster: string, key: string, entry: string, ttlMs: number): Promise<void> {
    const id = `${cluster}\u0000${key}`;
    const size = bytesOf(id, entry);
    if (size > this.maxBytes) return Promise.resolve();
    const previous = this.entries.get(id);
    if (previous !== undefined) {
      this.entries.delete(id);
      this.held -= bytesOf(id, previous.text);
    }
    this.entries.set(id, { text: entry, expiresAt: this.clock.wallNow() + ttlMs });
    this.held += size;
    for (const [oldest, held] of this.entries) {
      if (this.held <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.held -= bytesOf(oldest, held.text);
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
