/**
 * One cluster's result cache: the policy over a store (memory or Valkey). A read that asks for it is
 * answered from an entry only when every generation the entry was read at is still current (no write
 * the gateway ran since has touched what it read, on any task), when it is younger than its TTL (or its
 * stale-while-revalidate window), and when it was read at or after the caller's consistency token.
 * Misses read the primary (the plan's surface says so), after the generations were read: a write
 * acknowledged before the read began has bumped them already, so its entry is either fresh or invalid.
 * Writes bump generations through `afterWrite`/`afterCommit` before they are answered (docs/cache.md).
 */
import type { Clock } from "../clock.js";
import type { StatementAnalysis } from "../engines/sql-analysis.js";
import type { ClusterEvents } from "../events.js";
import type { Logger } from "../logger.js";
import { type CacheKeyParts, cacheKeyOf } from "./cache-key.js";
import { commitDependencies, type InvalidationMode, readDependencies, writeDependencies } from "./dependencies.js";
import type { Entry } from "./entry.js";
import type { CacheStore, Lookup } from "./store.js";

export interface ClusterCacheSettings {
  enabled: boolean;
  maxTtlMs: number;
  maxStaleWhileRevalidateMs: number;
  sharePrincipals: boolean;
  invalidation: InvalidationMode;
  maxEntryBytes: number;
}

/** Where the cluster's primary is known to be, and how positions compare (the engine's rule). */
export interface Positions {
  /** The primary's last known position (a lower bound of what a read started now sees), or null. */
  primaryNow(): string | null;
  compare(a: string, b: string): number;
}

export interface CachedRead {
  key: CacheKeyParts;
  analysis: StatementAnalysis;
  ttlMs: number;
  staleWhileRevalidateMs: number;
  consistencyToken: string | undefined;
}

export interface CacheAnswer {
  /** The answer's JSON text without its closing brace. */
  body: string;
  outcome: "hit" | "miss" | "stale" | "bypass";
}

/** Runs the read itself (on the primary) and gives its answer's JSON text without the closing brace. */
export type ReadRunner = () => Promise<string>;

/** Why a read that asked for the cache ran without it (a metrics label), and what the log says of it. */
export const BYPASS_REASONS = {
  disabled: "the cache is off for this cluster",
  "transaction-or-write": "statements of a transaction, and those sent with intent write, are not cached",
  "not-deterministic": "not a plain deterministic read: only one SELECT with no locking clause, session value or non-deterministic function is cached",
  "store-unavailable": "the store is unavailable (or not vouching for its entries since it was lost)",
} as const;
export type BypassReason = keyof typeof BYPASS_REASONS;

const sameGenerations = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((value, i) => value === b[i]);

export class ResultCache {
  /** Keys whose stale entry is being refreshed: one refresh per key at a time in this task. */
  private readonly refreshing = new Set<string>();

  constructor(
    private readonly cluster: string,
    private readonly store: CacheStore,
    readonly settings: ClusterCacheSettings,
    private readonly positions: Positions,
    private readonly clock: Clock,
    private readonly events: ClusterEvents,
    private readonly logger: Logger,
  ) {}

  /** Bytes of entries this task holds (memory store; undefined for a shared store). */
  bytes(): number | undefined {
    return this.store.bytes();
  }

  /** Why this statement is not cached (the answer says "bypass"), or undefined. */
  bypassReason(analysis: StatementAnalysis, transactionOrWrite: boolean): BypassReason | undefined {
    if (!this.settings.enabled) return "disabled";
    if (transactionOrWrite) return "transaction-or-write";
    if (!analysis.deterministic) return "not-deterministic";
    return undefined;
  }

  /** Counts and logs a read that asked for the cache and runs without it. */
  noteBypass(reason: BypassReason): void {
    this.logger.debug({ cluster: this.cluster, reason, why: BYPASS_REASONS[reason] }, "result cache bypassed");
    this.events.emit("cacheRead", { outcome: "bypass", reason });
  }

  private async bypass(reason: BypassReason, run: ReadRunner): Promise<CacheAnswer> {
    this.noteBypass(reason);
    return { body: await run(), outcome: "bypass" };
  }

  /**
   * A hit (or a stale answer) in this turn, where the store answers at once (memory); undefined when
   * the read needs `read` (a miss, or a store that waits). Asked first: a hit then takes no promise
   * and no turn (docs/performance.md).
   */
  readNow(request: CachedRead, run: ReadRunner): CacheAnswer | undefined {
    if (this.store.lookupNow === undefined) return undefined;
    const dependencies = readDependencies(request.analysis, this.settings.invalidation);
    const key = cacheKeyOf(request.key);
    return this.served(key, request, run, dependencies, this.store.lookupNow(this.cluster, key, dependencies));
  }

  read(request: CachedRead, run: ReadRunner): Promise<CacheAnswer> {
    const dependencies = readDependencies(request.analysis, this.settings.invalidation);
    const key = cacheKeyOf(request.key);
    return this.store.lookup(this.cluster, key, dependencies).then((lookup) => {
      if (lookup === undefined) return this.bypass("store-unavailable", run);
      const answer = this.served(key, request, run, dependencies, lookup);
      if (answer !== undefined) return answer;
      this.events.emit("cacheRead", { outcome: "miss" });
      return this.fill(key, request, run, lookup.generations).then((body) => ({ body, outcome: "miss" as const }));
    });
  }

  /** The entry's answer when it may be served: a hit, or a stale answer while one refresh runs. */
  private served(key: string, request: CachedRead, run: ReadRunner, dependencies: readonly string[], lookup: Lookup): CacheAnswer | undefined {
    const { entry } = lookup;
    if (entry === undefined || !this.servable(entry, lookup.generations, request.consistencyToken)) return undefined;
    const ageMs = this.clock.wallNow() - entry.header.at;
    if (ageMs <= entry.header.ttl) return this.answer("hit", entry);
    if (ageMs > entry.header.ttl + entry.header.swr) return undefined;
    this.refreshOnce(key, request, run, dependencies);
    return this.answer("stale", entry);
  }

  /** Read at the current generations, and at or after the caller's token (when there is one). */
  private servable(entry: Entry, generations: readonly string[], token: string | undefined): boolean {
    if (!sameGenerations(entry.header.g, generations)) return false;
    if (token === undefined) return true;
    return entry.header.p !== null && this.positions.compare(entry.header.p, token) >= 0;
  }

  private answer(outcome: "hit" | "stale", entry: Entry): CacheAnswer {
    this.events.emit("cacheRead", { outcome });
    return { body: entry.body, outcome };
  }

  /**
   * Runs the read and keeps its answer with the generations read before it ran. The position is taken
   * before the read too: what the read saw is at least that.
   */
  private async fill(key: string, request: CachedRead, run: ReadRunner, generations: readonly string[]): Promise<string> {
    const position = this.positions.primaryNow();
    const at = this.clock.wallNow();
    const body = await run();
    if (body.length <= this.settings.maxEntryBytes) {
      const header = { g: [...generations], p: position, at, ttl: request.ttlMs, swr: request.staleWhileRevalidateMs };
      await this.store.store(this.cluster, key, { header, body }, request.ttlMs + request.staleWhileRevalidateMs);
    }
    return body;
  }

  /** A stale entry's refresh, once per key: a failure leaves the entry, served only within its window. */
  private refreshOnce(key: string, request: CachedRead, run: ReadRunner, dependencies: readonly string[]): void {
    if (this.refreshing.has(key)) return;
    this.refreshing.add(key);
    void (async () => {
      const lookup = await this.store.lookup(this.cluster, key, dependencies);
      if (lookup !== undefined) await this.fill(key, request, run, lookup.generations);
    })()
      .catch((err: unknown) => this.logger.info({ cluster: this.cluster, err: String(err) }, "result cache refresh failed; the stale entry is served until its window ends"))
      .finally(() => this.refreshing.delete(key));
  }

  /**
   * `work`'s outcome, once the generations of what it may have written are moved on (whatever the
   * outcome: a failed write may have been applied). Work known to only read is `work` itself, with
   * no turn added: the hot path of reads pays nothing.
   */
  afterWrite<T>(work: Promise<T>, statements: readonly { analysis: StatementAnalysis }[], commitsNothing: boolean): Promise<T> {
    if (!this.invalidates(statements, commitsNothing)) return work;
    return this.settled(work, writeDependencies(statements, this.settings.invalidation));
  }

  /** Whether work of these statements moves generations on (afterWrite adds a step). */
  invalidates(statements: readonly { analysis: StatementAnalysis }[], commitsNothing: boolean): boolean {
    return this.settings.enabled && !commitsNothing && writeDependencies(statements, this.settings.invalidation).length > 0;
  }

  /** An interactive transaction's COMMIT (its statements are not tracked: a write of unknown tables). */
  afterCommit<T>(work: Promise<T>): Promise<T> {
    return this.settings.enabled ? this.settled(work, commitDependencies(this.settings.invalidation)) : work;
  }

  private settled<T>(work: Promise<T>, dependencies: readonly string[]): Promise<T> {
    return work.then(
      (value) => this.bump(dependencies).then(() => value),
      (err: unknown) => this.bump(dependencies).then(() => Promise.reject(err as Error)),
    );
  }

  private async bump(dependencies: readonly string[]): Promise<void> {
    const confirmed = await this.store.bump(this.cluster, dependencies);
    if (!confirmed) this.logger.warn({ cluster: this.cluster, store: this.store.kind }, "a write's cache invalidation was not confirmed; the store vouches for nothing until its epoch is renewed");
    this.events.emit("cacheInvalidation", { confirmed });
  }
}
