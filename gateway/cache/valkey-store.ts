/**
 * Entries and generations in Valkey (or Redis), shared by every task. A lookup is one MGET of the
 * entry and its generations; a write's bump is one MULTI of INCRs, sent before the write is answered.
 *
 * A connection that was lost, or a command that failed or timed out, may have hidden a bump (a write
 * on this task answered while Valkey was away). So a lost connection vouches for nothing: the task
 * bypasses the cache until it has reconnected and set every cluster's epoch to a new value, which
 * every entry read before it no longer matches. Generations and epochs evicted or lost with a restart
 * come back as new random values, never as an old one. Keys of a cluster share a hash tag (`{name}`),
 * so the MGET stays within one slot of a clustered Valkey.
 */
import { createHash, randomInt, randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { Logger } from "../logger.js";
import { decodeEntry, type Entry, encodeEntry } from "./entry.js";
import type { CacheStore, Lookup } from "./store.js";

export interface ValkeySettings {
  url: string;
  keyPrefix: string;
  commandTimeoutMs: number;
  connectTimeoutMs: number;
}

/** A generation's first value: random, so that one evicted and made again never repeats an old value. */
const freshGeneration = (): string => String(randomInt(2 ** 47));

export class ValkeyStore implements CacheStore {
  readonly kind = "valkey";
  private readonly client: Redis;
  /** Connected, and every epoch moved on since the connection was made. */
  private vouching = false;
  private closed = false;

  constructor(
    settings: ValkeySettings,
    private readonly clusters: readonly string[],
    private readonly logger: Logger,
  ) {
    this.prefix = settings.keyPrefix;
    this.client = new Redis(settings.url, {
      lazyConnect: true,
      // Commands fail at once while disconnected (the cache is bypassed), never queue behind a reconnect.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: settings.commandTimeoutMs,
      connectTimeout: settings.connectTimeoutMs,
      retryStrategy: (times) => Math.min(50 * times, 1000),
    });
    this.client.on("ready", () => void this.renewEpochs());
    this.client.on("close", () => this.stopVouching("connection closed"));
    // Errors are followed by a close and a reconnect; the listener keeps them from being thrown.
    this.client.on("error", (err: Error) => this.logger.debug({ err: err.message }, "valkey connection error"));
  }

  private readonly prefix: string;

  /** Connects in the background: until then the cache is bypassed. */
  start(): void {
    this.client.connect().catch((err: unknown) => this.logger.warn({ err: String(err) }, "valkey not reachable yet; the result cache is bypassed until it is"));
  }

  private key(cluster: string, name: string): string {
    return `${this.prefix}:{${cluster}}:${name}`;
  }

  /** An entry's key in Valkey: the cache key (its parts' JSON text, of any length) hashed to a fixed size. */
  private entryKey(cluster: string, key: string): string {
    return this.key(cluster, `e:${createHash("sha256").update(key).digest("base64url")}`);
  }

  private async renewEpochs(): Promise<void> {
    try {
      const multi = this.client.multi();
      for (const cluster of this.clusters) multi.set(this.key(cluster, "epoch"), randomUUID());
      await multi.exec();
      this.vouching = true;
      this.logger.info({ clusters: this.clusters.length }, "valkey reachable: epochs renewed, the result cache is in use");
    } catch (err) {
      this.lost("epoch renewal failed", err);
    }
  }

  private stopVouching(reason: string): void {
    if (this.vouching) this.logger.warn({ reason }, "valkey lost: the result cache is bypassed until it is back and its epochs renewed");
    this.vouching = false;
  }

  /** A command failed: what it did is unknown, so the connection is dropped and made again (renewing the epochs). */
  private lost(reason: string, err: unknown): void {
    this.stopVouching(`${reason}: ${err instanceof Error ? err.message : String(err)}`);
    if (!this.closed && this.client.status === "ready") this.client.disconnect(true);
  }

  async lookup(cluster: string, key: string, dependencies: readonly string[]): Promise<Lookup | undefined> {
    if (!this.vouching) return undefined;
    const names = [this.key(cluster, "epoch"), ...dependencies.map((name) => this.key(cluster, `g:${name}`))];
    try {
      const [entry, ...generations] = await this.client.mget(this.entryKey(cluster, key), ...names);
      if (!this.vouching) return undefined;
      if (generations.every((value) => value !== null)) return { entry: entry === null || entry === undefined ? undefined : decodeEntry(entry), generations: generations };
      // First use of a generation (or one evicted): made with a random value, then read back.
      const multi = this.client.multi();
      names.forEach((name, i) => {
        if (generations[i] === null) multi.set(name, i === 0 ? randomUUID() : freshGeneration(), "NX");
      });
      multi.mget(...names);
      const replies = (await multi.exec()) ?? [];
      const read = replies.at(-1)?.[1] as (string | null)[] | undefined;
      if (!this.vouching || read === undefined || read.some((value) => value === null)) return undefined;
      return { entry: entry === null || entry === undefined ? undefined : decodeEntry(entry), generations: read as string[] };
    } catch (err) {
      this.lost("lookup failed", err);
      return undefined;
    }
  }

  async store(cluster: string, key: string, entry: Entry, ttlMs: number): Promise<void> {
    if (!this.vouching) return;
    try {
      await this.client.set(this.entryKey(cluster, key), encodeEntry(entry), "PX", Math.max(1, Math.ceil(ttlMs)));
    } catch (err) {
      this.lost("store failed", err);
    }
  }

  async bump(cluster: string, dependencies: readonly string[]): Promise<boolean> {
    // Not connected: the reconnect renews the epochs after this write, which is what the bump was for.
    if (this.client.status !== "ready") return false;
    try {
      const multi = this.client.multi();
      for (const name of dependencies) multi.incr(this.key(cluster, `g:${name}`));
      const replies = (await multi.exec()) ?? [];
      if (replies.length !== dependencies.length || replies.some(([err]) => err !== null)) throw new Error("a generation could not be moved on");
      return true;
    } catch (err) {
      this.lost("invalidation failed", err);
      return false;
    }
  }

  bytes(): undefined {
    return undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.vouching = false;
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
