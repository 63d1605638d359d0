/**
 * The connection pool for one endpoint, to HikariCP's standard: bounded size, warm minimum idle,
 * FIFO-fair waiters with direct hand-off, acquire timeouts that state the pool's condition, liveness
 * checks after idleness, immediate eviction of dead sessions, session reset before reuse, jittered
 * max lifetime, idle timeout and keepalive (see housekeeper.ts), and a bounded drain. A caller may
 * give up waiting early (its request's deadline, or a signal: its endpoint stopped being the primary),
 * and connections may be re-verified before reuse (their endpoint changed role).
 * It knows no SQL dialect: connections come from a ConnectionSource over the Engine interface.
 */

import type { PoolState } from "../../schemas/errors.js";
import type { PoolStats } from "../../schemas/health.js";
import type { EngineConnection } from "../engines/engine.js";
import { GatewayError } from "../errors.js";
import { endWith, startSpan, withSpan } from "../tracing/request-trace.js";
import type { Logger } from "../logger.js";
import { type Clock, systemClock, type Timer } from "../clock.js";
import { ConnectFailureLog } from "./connect-failures.js";
import { runHousekeeping } from "./housekeeper.js";
import { type ConnectionVerifier, PoolEntry } from "./pool-entry.js";
import { PoolCounters } from "./stats.js";
import { WaiterQueue } from "./waiter-queue.js";

export interface PoolSettings {
  maxSize: number;
  minIdle: number;
  acquireTimeoutMs: number;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  maxLifetimeMs: number;
  keepaliveMs: number;
  validationTimeoutMs: number;
  aliveBypassMs: number;
  housekeepingIntervalMs: number;
}

/**
 * Who asks for a connection, for fairness between callers: waiters are served round-robin across
 * tenants, and a tenant holds at most `share` of the pool at once (HikariCP has no tenants; this is
 * pgcat's per-user pools, without splitting the connections).
 */
export interface AcquireClaim {
  tenant: string;
  /** Fraction of maxSize this tenant may hold at once (at least one connection). */
  share: number;
}

const UNCLAIMED: AcquireClaim = { tenant: "", share: 1 };

/** How long a caller waits at most, and what makes it stop waiting at once. */
export interface AcquireOptions {
  /** Clock time past which the caller gives up (its request's deadline); pool.acquireTimeoutMs applies too. */
  deadline?: number | undefined;
  /**
   * Aborted when the caller's reason to use this pool ends (its endpoint stopped being the primary):
   * a caller still waiting is rejected at once, with the signal's reason when that is a GatewayError.
   */
  signal?: AbortSignal | undefined;
}

/**
 * While a paused database resumes (a pool at rest woken by a caller): callers wait within their own
 * deadlines up to `until` (not pool.acquireTimeoutMs), new connections may take that long to open, and a
 * caller whose deadline ends first is told DATABASE_RESUMING. Ends with the first connection opened.
 */
export interface ResumeWindow {
  /** Clock time until which the resume is waited for. */
  until: number;
  /** Retry-After for a caller that gave up, in whole seconds. */
  retryAfterS(now: number): number;
}

/** Who is told when a pool at rest is asked for a session, and when a connection opens during a resume. */
export interface RestListener {
  woken(pool: Pool): void;
  resumed(pool: Pool): void;
}

export interface ConnectionSource {
  open(connectTimeoutMs: number): Promise<EngineConnection>;
  describeError(err: unknown): string;
}

/** A connect failure's code (a socket error, a SQLSTATE, a MySQL error name), without its message. */
function errorCodeOf(err: unknown): string {
  const candidate = err as { code?: unknown; errno?: unknown } | null;
  if (typeof candidate?.code === "string" && /^[A-Za-z0-9_]{1,40}$/.test(candidate.code)) return candidate.code;
  if (typeof candidate?.errno === "number") return `error ${candidate.errno}`;
  return "connection failed";
}

/** Whether lending the entry to `tenant` needs the full reset first: another tenant's work may be in it. */
function crossesTenant(entry: PoolEntry, tenant: string): boolean {
  return entry.lastTenant !== undefined && entry.lastTenant !== tenant;
}

/** HikariCP retires connections up to 2.5% early so a pool's connections never expire together. */
const LIFETIME_JITTER = 0.025;
const MAX_CONNECT_BACKOFF_MS = 1000;

export class Pool {
  /** Every live entry, whatever its state. */
  readonly entries = new Set<PoolEntry>();
  /** NOT_IN_USE entries; the most recently used on top, so the bottom ones age out. */
  readonly idle: PoolEntry[] = [];
  readonly counters = new PoolCounters();
  private readonly waiters = new WaiterQueue();
  /** Borrowed entries per tenant, and each tenant's cap, for the fair-share rule. */
  private readonly inUse = new Map<string, { count: number; cap: number }>();
  /** Idle entries being validated on their way to a waiter (pulse). */
  private reviving = 0;
  private readonly eligible = (tenant: string): boolean => {
    const held = this.inUse.get(tenant);
    return held === undefined || held.count < held.cap;
  };
  private pendingCreates = 0;
  private closed = false;
  private consecutiveConnectFailures = 0;
  private readonly connectFailureLog: ConnectFailureLog;
  private lastConnectError: string | undefined;
  /** The last connect failure's code alone (ECONNREFUSED, 28P01...): what a caller is told. */
  private lastConnectErrorCode = "connection failed";
  private lastConnectedAt: number | undefined;
  private retryTimer: Timer | undefined;
  private housekeepingTimer: Timer | undefined;
  private drained: (() => void) | undefined;
  /** The one timer that times out waiters (armDeadlineTimer), and the deadline it is set for. */
  private deadlineTimer: Timer | undefined;
  private deadlineTimerAt = Number.POSITIVE_INFINITY;
  /** Abort signals listened to for the waiters carrying them, with their listeners (removed at close). */
  private readonly watchedSignals = new Map<AbortSignal, () => void>();
  /** Polite closes under way (Terminate sent, socket not yet closed); close() waits for them. */
  private readonly closing = new Set<Promise<void>>();
  /** At rest (rest()): no sessions kept, none opened until a caller asks. */
  private resting = false;
  private resumeWindow: ResumeWindow | undefined;
  /** Told when a caller wakes the pool from rest, and when the database answers again. */
  restListener: RestListener | undefined;
  /** Clock time a session was last lent (undefined: never). */
  lastLentAt: number | undefined;

  constructor(
    readonly name: string,
    private readonly source: ConnectionSource,
    readonly settings: PoolSettings,
    private readonly logger: Logger,
    readonly clock: Clock = systemClock,
  ) {
    this.connectFailureLog = new ConnectFailureLog(name, logger, () => this.clock.now());
  }

  /** Opens minIdle connections and starts the housekeeper. */
  start(): void {
    this.fill();
    this.housekeepingTimer = this.clock.every(this.settings.housekeepingIntervalMs, () => void this.housekeep());
  }

  /** Resolves once the start-up connections are open or have failed. */
  async whenWarm(timeoutMs: number): Promise<boolean> {
    const deadline = this.clock.now() + timeoutMs;
    while (this.clock.now() < deadline) {
      if (this.idle.length >= this.settings.minIdle) return true;
      if (this.pendingCreates === 0 && this.consecutiveConnectFailures > 0) return false;
      await this.clock.sleep(10);
    }
    return false;
  }

  /** Borrows a connection for `claim`'s tenant (default: callers not told apart). */
  acquire(claim: AcquireClaim = UNCLAIMED, options: AcquireOptions = {}): Promise<PoolEntry> {
    const startedAt = this.clock.now();
    this.registerTenant(claim);
    if (this.resting) this.wake();
    // During a resume the wait is bounded by the resume window, not by acquireTimeoutMs.
    const window = this.windowAt(startedAt);
    const bound = window === undefined ? startedAt + this.settings.acquireTimeoutMs : Math.max(window.until, startedAt + this.settings.acquireTimeoutMs);
    const deadline = Math.min(bound, options.deadline ?? Number.POSITIVE_INFINITY);
    const span = startSpan("poolgate.pool.acquire");
    if (span === undefined) return this.acquireUntil(claim.tenant, startedAt, deadline, options.signal);
    span.setAttribute("poolgate.pool.name", this.name);
    span.setAttribute("poolgate.pool.idle", this.idle.length);
    span.setAttribute("poolgate.pool.waiting", this.waiters.length);
    // The acquire span is active meanwhile: a queue wait and a reset or liveness check hang under it.
    return endWith(
      span,
      withSpan(span, () => this.acquireUntil(claim.tenant, startedAt, deadline, options.signal)),
      (entry, ended) => ended.setAttribute("poolgate.pool.connection", entry.connection.id),
    );
  }

  /**
   * Closes every idle session and keeps none warm until a caller asks again (then minIdle applies
   * again), so that the database sees no connection and may pause. Borrowed sessions are not touched:
   * the caller (the cluster's idle policy) rests a pool only when none is borrowed.
   */
  rest(): void {
    if (this.closed || this.resting) return;
    this.resting = true;
    for (const entry of [...this.idle]) this.remove(entry, "retired", "at rest (idle to zero)");
  }

  get atRest(): boolean {
    return this.resting;
  }

  /** A caller asks a pool at rest: keep sessions warm again, and tell the listener (it may open a resume window). */
  private wake(): void {
    this.resting = false;
    this.restListener?.woken(this);
  }

  /** Callers wait for the database to resume within `window` (see ResumeWindow); undefined ends it. */
  expectResume(window: ResumeWindow | undefined): void {
    this.resumeWindow = window;
  }

  get resuming(): boolean {
    return this.windowAt(this.clock.now()) !== undefined;
  }

  /** The resume window while it lasts: past its end the database is not resuming but unavailable. */
  private windowAt(now: number): ResumeWindow | undefined {
    const window = this.resumeWindow;
    return window !== undefined && now < window.until ? window : undefined;
  }

  /**
   * acquire's answer when it needs neither a wait nor a round trip, without a promise: an idle entry
   * of the claim's tenant (or one nobody has used), checked recently enough, and no eligible caller
   * queued ahead. Undefined otherwise (the pool is closed, the signal aborted, a wait or a check is
   * needed): the caller then goes through acquire, which decides the rest.
   */
  acquireNow(claim: AcquireClaim = UNCLAIMED, signal?: AbortSignal): PoolEntry | undefined {
    // Nothing idle (every caller queues under load): acquire decides, with nothing done twice.
    if (this.closed || this.idle.length === 0 || signal?.aborted === true) return undefined;
    const tenant = claim.tenant;
    this.registerTenant(claim);
    const at = this.idleIndexForNewCaller(tenant);
    const entry = at < 0 ? undefined : this.lendIdleAtOnce(at, tenant, undefined);
    if (entry !== undefined) this.traceLentAtOnce(entry);
    return entry;
  }

  /** A traced request's session lent with no wait: a span of no length that says so. */
  private traceLentAtOnce(entry: PoolEntry): void {
    const span = startSpan("poolgate.pool.acquire");
    if (span === undefined) return;
    span.setAttribute("poolgate.pool.name", this.name);
    span.setAttribute("poolgate.pool.connection", entry.connection.id);
    span.setAttribute("poolgate.pool.lent_at_once", true);
    span.end();
  }

  /** Borrowed entries per tenant (tenants holding none are not listed). */
  inUseByTenant(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const [tenant, held] of this.inUse) if (held.count > 0) counts.set(tenant, held.count);
    return counts;
  }

  private registerTenant(claim: AcquireClaim): void {
    const cap = Math.max(1, Math.floor(claim.share * this.settings.maxSize + 1e-9));
    const held = this.inUse.get(claim.tenant);
    if (held) held.cap = cap;
    else this.inUse.set(claim.tenant, { count: 0, cap });
  }

  private acquireUntil(tenant: string, startedAt: number, deadline: number, signal: AbortSignal | undefined): Promise<PoolEntry> {
    if (this.closed) return Promise.reject(this.drainingError());
    if (signal?.aborted) return Promise.reject(this.abandonedError(signal));
    const at = this.idleIndexForNewCaller(tenant);
    if (at < 0) return this.enqueue(tenant, startedAt, deadline, signal);
    const lent = this.lendIdleAtOnce(at, tenant, startedAt);
    if (lent !== undefined) return Promise.resolve(lent);
    const entry = this.idle[at] as PoolEntry;
    this.removeIdleAt(at);
    return this.prepareThenLend(entry, tenant, startedAt, deadline, signal);
  }

  /**
   * The idle entry at `at`, lent to `tenant` when it may go with no round trip first (lendableAtOnce);
   * else undefined, and it stays idle. `startedAt`: when the caller began to wait (none: now).
   */
  private lendIdleAtOnce(at: number, tenant: string, startedAt: number | undefined): PoolEntry | undefined {
    const entry = this.idle[at] as PoolEntry;
    const now = this.clock.now();
    if (!this.lendableAtOnce(entry, tenant, now)) return undefined;
    this.removeIdleAt(at);
    return this.lend(entry, tenant, startedAt ?? now, false, now);
  }

  /**
   * Where in `idle` the entry a new caller of `tenant` may take is; -1 when none is idle, or when
   * someone who could take it is queued ahead (idle connections never jump the queue).
   */
  private idleIndexForNewCaller(tenant: string): number {
    if (!this.eligible(tenant) || this.waiters.countEligible(this.eligible) !== 0) return -1;
    return this.idleIndexFor(tenant);
  }

  /** Whether an idle entry can go to `tenant` with no round trip first: not another principal's, and checked within aliveBypassMs. */
  private lendableAtOnce(entry: PoolEntry, tenant: string, now: number): boolean {
    return !crossesTenant(entry, tenant) && now - entry.lastAccessedAt <= this.settings.aliveBypassMs;
  }

  /**
   * Where the idle entry for a tenant is in `idle` (-1: none is idle): the most recent one it used
   * itself or one nobody has used, so that with one principal (or a few, and room enough) sessions
   * never need the full reset; else the most recent one of another tenant.
   */
  private idleIndexFor(tenant: string): number {
    for (let i = this.idle.length - 1; i >= 0; i--) {
      const entry = this.idle[i] as PoolEntry;
      if (entry.lastTenant === undefined || entry.lastTenant === tenant) return i;
    }
    return this.idle.length - 1;
  }

  private removeIdleAt(at: number): void {
    if (at === this.idle.length - 1) this.idle.pop();
    else this.idle.splice(at, 1);
  }

  /**
   * An entry that needs a round trip before it is lent: the full reset when another tenant used it
   * last (which also proves it alive), else a liveness check after idleness. The tenant counts it as
   * held meanwhile, so that its share holds while the round trip is under way.
   */
  private async prepareThenLend(entry: PoolEntry, tenant: string, startedAt: number, deadline: number, signal: AbortSignal | undefined): Promise<PoolEntry> {
    const crossing = crossesTenant(entry, tenant);
    entry.state = "RESERVED";
    this.countHeld(tenant, 1);
    try {
      if (crossing) await entry.connection.resetFully(this.settings.validationTimeoutMs);
      else await entry.connection.ping(this.settings.validationTimeoutMs);
    } catch (err) {
      this.countHeld(tenant, -1);
      const why = this.source.describeError(err);
      if (crossing) this.remove(entry, "retired", `reset between principals failed: ${why}`);
      else this.remove(entry, "evicted", `failed validation: ${why}`);
      this.fill();
      return this.acquireUntil(tenant, startedAt, deadline, signal);
    }
    if (crossing) {
      entry.lastTenant = undefined;
      this.counters.resets++;
    }
    if (this.isReusable(entry)) return this.lend(entry, tenant, startedAt, true);
    // Due for retirement or reset meanwhile: give it back through the one return path.
    this.countHeld(tenant, -1);
    this.giveBack(entry);
    return this.acquireUntil(tenant, startedAt, deadline, signal);
  }

  /**
   * Lends an entry; `counted` when prepareThenLend already counted it against the tenant's share.
   * `now` is the clock as the caller last read it, when that was just now (one read per decision).
   */
  private lend(entry: PoolEntry, tenant: string, startedAt: number, counted = false, now = this.clock.now()): PoolEntry {
    entry.state = "IN_USE";
    entry.tenant = tenant;
    entry.lastTenant = tenant;
    if (!counted) this.countHeld(tenant, 1);
    this.counters.recordAcquireWait(now - startedAt);
    this.lastLentAt = now;
    return entry;
  }

  private countHeld(tenant: string, delta: 1 | -1): void {
    const held = this.inUse.get(tenant);
    if (held) held.count = Math.max(0, held.count + delta);
    else if (delta > 0) this.inUse.set(tenant, { count: 1, cap: this.settings.maxSize });
  }

  /** The borrower gave the entry back (or it died in use): its tenant holds one fewer. */
  private unlend(entry: PoolEntry): void {
    this.countHeld(entry.tenant, -1);
  }

  private enqueue(tenant: string, startedAt: number, deadline: number, signal: AbortSignal | undefined): Promise<PoolEntry> {
    const span = startSpan("poolgate.pool.queue_wait");
    const queued = this.queue(tenant, startedAt, deadline, signal);
    if (span === undefined) return queued;
    span.setAttribute("poolgate.pool.waiting", this.waiters.length);
    return endWith(span, queued);
  }

  private queue(tenant: string, startedAt: number, deadline: number, signal: AbortSignal | undefined): Promise<PoolEntry> {
    return new Promise<PoolEntry>((resolve, reject) => {
      this.waiters.push({ enqueuedAt: startedAt, deadline, signal, tenant, settled: false, resolve, reject });
      if (signal) this.watch(signal);
      if (deadline < this.deadlineTimerAt) this.armDeadlineTimer(deadline);
      this.fill();
    });
  }

  /**
   * One timer for all waiters, not one each: it is set for the earliest deadline, and when it fires
   * every waiter due by then times out and it is set again for the next. Equal timeouts make deadlines
   * arrive in order, so a waiter costs no timer of its own and rarely moves this one.
   */
  private armDeadlineTimer(at: number): void {
    this.deadlineTimer?.cancel();
    this.deadlineTimerAt = at;
    this.deadlineTimer = this.clock.after(Math.max(0, at - this.clock.now()), () => this.timeOutWaiters(at));
  }

  private timeOutWaiters(due: number): void {
    this.deadlineTimer = undefined;
    this.deadlineTimerAt = Number.POSITIVE_INFINITY;
    const now = Math.max(due, this.clock.now());
    for (const waiter of this.waiters.takeWhere((candidate) => candidate.deadline <= now)) {
      waiter.reject(this.timeoutError(this.clock.now() - waiter.enqueuedAt));
    }
    const next = this.waiters.earliestDeadline();
    if (next !== Number.POSITIVE_INFINITY && !this.closed) this.armDeadlineTimer(next);
  }

  /**
   * Listens to a waiter's abort signal (a primary's lease) once for all the waiters that carry it:
   * when it aborts, every one of them stops waiting.
   */
  private watch(signal: AbortSignal): void {
    if (this.watchedSignals.has(signal)) return;
    const abandon = (): void => {
      this.watchedSignals.delete(signal);
      for (const waiter of this.waiters.takeWhere((candidate) => candidate.signal === signal)) waiter.reject(this.abandonedError(signal));
    };
    this.watchedSignals.set(signal, abandon);
    signal.addEventListener("abort", abandon, { once: true });
  }

  /**
   * Gives a ready entry to the next eligible waiter (fair across tenants), after a full reset when
   * another tenant used it last; or makes it idle.
   */
  private handOff(entry: PoolEntry, now = this.clock.now()): void {
    const waiter = this.waiters.shift(this.eligible);
    if (waiter) {
      if (crossesTenant(entry, waiter.tenant)) {
        this.prepareThenLend(entry, waiter.tenant, waiter.enqueuedAt, waiter.deadline, waiter.signal).then(
          (lent) => waiter.resolve(lent),
          (err: GatewayError) => waiter.reject(err),
        );
        return;
      }
      waiter.resolve(this.lend(entry, waiter.tenant, waiter.enqueuedAt, false, now));
      return;
    }
    entry.state = "NOT_IN_USE";
    entry.lastAccessedAt = now;
    this.idle.push(entry);
  }

  /** Returns a borrowed entry: reset if the caller may have changed the session, retire if due. */
  release(entry: PoolEntry): void {
    if (entry.state !== "IN_USE") return;
    this.unlend(entry);
    this.giveBack(entry);
    // Its tenant may be under its share again, with connections idle that its waiters could not take.
    if (this.idle.length > 0 && this.waiters.length > 0) this.pulse();
  }

  /** Pairs idle entries with waiters that have become eligible; stale entries are checked on the way. */
  private pulse(): void {
    while (this.idle.length > 0 && this.waiters.countEligible(this.eligible) > this.reviving) {
      const entry = this.idle.pop() as PoolEntry;
      if (this.clock.now() - entry.lastAccessedAt <= this.settings.aliveBypassMs) {
        this.handOff(entry);
        continue;
      }
      entry.state = "RESERVED";
      this.reviving++;
      entry.connection.ping(this.settings.validationTimeoutMs).then(
        () => {
          this.reviving--;
          this.giveBack(entry);
        },
        (err: unknown) => {
          this.reviving--;
          this.remove(entry, "evicted", `failed validation: ${this.source.describeError(err)}`);
          this.fill();
        },
      );
    }
  }

  /** Whether an entry the pool holds may go to a caller as it is. */
  private isReusable(entry: PoolEntry): boolean {
    return (
      !this.closed &&
      entry.connection.alive &&
      entry.retireOnRelease === null &&
      entry.verifyBeforeUse === null &&
      this.clock.now() < entry.expiresAt &&
      !entry.connection.needsReset
    );
  }

  /**
   * The one way back into the pool, for borrowed entries and for the pool's own pings and resets:
   * evict the dead, retire the due, reset what a caller may have changed, then hand off or park.
   */
  private giveBack(entry: PoolEntry): void {
    const connection = entry.connection;
    const now = this.clock.now();
    if (!connection.alive) {
      this.remove(entry, "evicted", "session died while in use");
    } else if (this.closed || entry.retireOnRelease !== null || now >= entry.expiresAt) {
      this.remove(entry, "retired", entry.retireOnRelease ?? (this.closed ? "pool closed" : "max lifetime"));
    } else if (connection.needsReset) {
      entry.state = "RESERVED";
      this.counters.releaseResets++;
      connection.reset(this.settings.validationTimeoutMs).then(
        (full) => {
          if (full) entry.lastTenant = undefined;
          this.giveBack(entry);
        },
        (err: unknown) => {
          this.remove(entry, "retired", `session reset failed: ${this.source.describeError(err)}`);
          this.fill();
        },
      );
      return;
    } else if (entry.verifyBeforeUse !== null) {
      this.verify(entry, entry.verifyBeforeUse);
      return;
    } else {
      this.handOff(entry, now);
      return;
    }
    this.fill();
  }

  /** Closes an entry for good. Evicted = broken; retired = healthy but due. */
  remove(entry: PoolEntry, kind: "evicted" | "retired", reason: string): void {
    if (entry.state === "REMOVED") return;
    if (entry.state === "NOT_IN_USE") {
      const at = this.idle.indexOf(entry);
      if (at >= 0) this.idle.splice(at, 1);
    }
    entry.state = "REMOVED";
    this.entries.delete(entry);
    this.counters[kind]++;
    this.logger.debug({ pool: this.name, connection: entry.connection.id, kind, reason }, "connection removed");
    if (kind === "evicted" || !entry.connection.alive) entry.connection.destroy();
    else {
      const closing = entry.connection.close().finally(() => this.closing.delete(closing));
      this.closing.add(closing);
    }
    if (this.closed && this.entries.size === 0) this.drained?.();
  }

  /** Opens connections for waiters and up to minIdle, within maxSize and the connect backoff. */
  fill(): void {
    if (this.closed || this.retryTimer) return;
    const maxSize = this.settings.maxSize;
    const minIdle = this.resting ? 0 : this.settings.minIdle;
    const wanted = Math.max(this.waiters.countEligible(this.eligible) - this.reviving, minIdle - this.idle.length) - this.pendingCreates;
    const room = maxSize - this.entries.size - this.pendingCreates;
    for (let i = 0; i < Math.min(wanted, room); i++) this.create();
  }

  private create(): void {
    this.pendingCreates++;
    const window = this.windowAt(this.clock.now());
    // A resuming database answers a connect once it is up (AWS: about 15 s): give the connect that long.
    const connectTimeoutMs = window === undefined ? this.settings.connectTimeoutMs : Math.max(this.settings.connectTimeoutMs, window.until - this.clock.now());
    this.source.open(connectTimeoutMs).then(
      (connection) => {
        this.pendingCreates--;
        if (this.closed) {
          void connection.close();
          return;
        }
        const now = this.clock.now();
        if (this.resumeWindow !== undefined) {
          this.resumeWindow = undefined;
          this.restListener?.resumed(this);
        }
        this.consecutiveConnectFailures = 0;
        this.connectFailureLog.connected();
        this.lastConnectedAt = this.clock.wallNow();
        const lifetime = this.settings.maxLifetimeMs;
        const expiresAt = lifetime > 0 ? now + lifetime - Math.random() * lifetime * LIFETIME_JITTER : Number.POSITIVE_INFINITY;
        const entry = new PoolEntry(connection, now, expiresAt);
        connection.onDeath((cause) => this.onDeath(entry, cause));
        this.entries.add(entry);
        this.counters.created++;
        this.handOff(entry);
      },
      (err: unknown) => {
        this.pendingCreates--;
        this.consecutiveConnectFailures++;
        this.lastConnectError = this.source.describeError(err);
        this.lastConnectErrorCode = errorCodeOf(err);
        this.connectFailureLog.failed(this.lastConnectError);
        this.scheduleRetry();
      },
    );
  }

  /** After a failed connect, try again with capped exponential backoff and full jitter. */
  private scheduleRetry(): void {
    if (this.closed || this.retryTimer) return;
    const cap = Math.min(MAX_CONNECT_BACKOFF_MS, 10 * 2 ** this.consecutiveConnectFailures);
    this.retryTimer = this.clock.after(
      Math.random() * cap,
      () => {
        this.retryTimer = undefined;
        this.fill();
      },
      { keepAlive: false },
    );
  }

  private onDeath(entry: PoolEntry, cause: Error): void {
    // An idle session is removed at once; a borrowed one when its borrower releases it.
    if (entry.state === "NOT_IN_USE") {
      this.remove(entry, "evicted", `session died while idle: ${cause.message}`);
      this.fill();
    }
  }

  /** One housekeeping pass: lifetimes, idle timeout, keepalive, refill. Tests call it directly. */
  housekeep(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return runHousekeeping(this, {
      retire: (entry, reason) => this.remove(entry, "retired", reason),
      evict: (entry, reason) => this.remove(entry, "evicted", reason),
      giveBack: (entry) => this.giveBack(entry),
      fill: () => this.fill(),
      describeError: (err) => this.source.describeError(err),
    });
  }

  state(): PoolState {
    return {
      total: this.entries.size,
      active: this.entries.size - this.idle.length,
      idle: this.idle.length,
      waiting: this.waiters.length,
    };
  }

  stats(): PoolStats {
    return Object.assign(this.state(), {
      pendingCreates: this.pendingCreates,
      created: this.counters.created,
      evicted: this.counters.evicted,
      retired: this.counters.retired,
      resets: this.counters.resets,
      releaseResets: this.counters.releaseResets,
      acquireWaitMs: this.counters.acquireWait(),
    });
  }

  databaseState(): { status: "up" | "down" | "unknown" | "idle" | "resuming"; lastError?: string; lastConnectedAt?: string } {
    const state: { status: "up" | "down" | "unknown" | "idle" | "resuming"; lastError?: string; lastConnectedAt?: string } = {
      status: this.consecutiveConnectFailures > 0 ? "down" : this.lastConnectedAt ? "up" : "unknown",
    };
    if (this.lastConnectError !== undefined) state.lastError = this.lastConnectError;
    if (this.lastConnectedAt !== undefined) state.lastConnectedAt = new Date(this.lastConnectedAt).toISOString();
    return state;
  }

  private timeoutError(waitedMs: number): GatewayError {
    const pool = this.state();
    const condition = `total=${pool.total}, active=${pool.active}, idle=${pool.idle}, waiting=${pool.waiting}`;
    const message = `${this.name}: no connection available after ${Math.round(waitedMs)}ms (${condition})`;
    const now = this.clock.now();
    const window = this.windowAt(now);
    if (window !== undefined) {
      return new GatewayError("DATABASE_RESUMING", `${this.name}: the database is resuming from a pause; the request's deadline came first after ${Math.round(waitedMs)}ms (${condition})`, {
        pool,
        retryAfterS: window.retryAfterS(now),
        final: true,
      });
    }
    if (this.consecutiveConnectFailures > 0 && pool.total === 0) {
      // The driver's words stay in the log and the operator routes: they name hosts, ports and users.
      return new GatewayError("DATABASE_UNAVAILABLE", `${message}; cannot connect to the database (${this.lastConnectErrorCode})`, { pool });
    }
    return new GatewayError("POOL_TIMEOUT", message, { pool });
  }

  private drainingError(): GatewayError {
    return new GatewayError("GATEWAY_DRAINING", `${this.name}: the pool is closed (the gateway is shutting down)`);
  }

  /** A fresh error per caller (the retry loop writes its attempts on it), from the signal's reason. */
  private abandonedError(signal: AbortSignal): GatewayError {
    const reason: unknown = signal.reason;
    if (reason instanceof GatewayError) return new GatewayError(reason.code, reason.message, { retryAfterS: reason.retryAfterS });
    return new GatewayError("POOL_TIMEOUT", `${this.name}: the caller stopped waiting for a connection`, { pool: this.state() });
  }

  /**
   * Marks the connections that match to be verified before anyone uses them again: idle ones are
   * checked now, borrowed ones when they come back; those `verify` rejects are retired. For sessions
   * whose endpoint changed role — a promoted standby's sessions are good primary sessions, so they are
   * checked rather than thrown away. Returns how many were marked.
   */
  verifyWhere(matches: (connection: EngineConnection) => boolean, verify: ConnectionVerifier, reason: string): number {
    let count = 0;
    for (const entry of [...this.entries]) {
      if (entry.state === "REMOVED" || !matches(entry.connection)) continue;
      count++;
      entry.verifyBeforeUse = { verify, reason };
      if (entry.state !== "NOT_IN_USE") continue;
      this.idle.splice(this.idle.indexOf(entry), 1);
      this.giveBack(entry);
    }
    return count;
  }

  private verify(entry: PoolEntry, check: NonNullable<PoolEntry["verifyBeforeUse"]>): void {
    entry.state = "RESERVED";
    check.verify(entry.connection, this.settings.validationTimeoutMs).then(
      (usable) => {
        // A newer mark (another role change meanwhile) stays: giveBack checks the entry again.
        if (entry.verifyBeforeUse === check) entry.verifyBeforeUse = null;
        if (usable) this.giveBack(entry);
        else {
          this.remove(entry, "retired", check.reason);
          this.fill();
        }
      },
      (err: unknown) => {
        this.remove(entry, "evicted", `verification failed: ${this.source.describeError(err)}`);
        this.fill();
      },
    );
  }

  /** Retires the connections that match: idle ones now, borrowed ones when they come back. Returns how many. */
  retireWhere(matches: (connection: EngineConnection) => boolean, reason: string): number {
    let count = 0;
    for (const entry of [...this.entries]) {
      if (!matches(entry.connection)) continue;
      count++;
      if (entry.state === "NOT_IN_USE") this.remove(entry, "retired", reason);
      else entry.retireOnRelease = reason;
    }
    if (count > 0) this.fill();
    return count;
  }

  /** Rejects waiters, closes idle connections, waits up to timeoutMs for borrowed ones, then cuts them. */
  async close(timeoutMs: number): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.housekeepingTimer?.cancel();
    this.retryTimer?.cancel();
    this.deadlineTimer?.cancel();
    for (const [signal, abandon] of this.watchedSignals) signal.removeEventListener("abort", abandon);
    this.watchedSignals.clear();
    for (let waiter = this.waiters.shift(); waiter; waiter = this.waiters.shift()) waiter.reject(this.drainingError());
    for (const entry of [...this.idle]) this.remove(entry, "retired", "pool closed");
    if (this.entries.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = this.clock.after(timeoutMs, resolve);
        this.drained = () => {
          timer.cancel();
          resolve();
        };
      });
    }
    for (const entry of [...this.entries]) this.remove(entry, "evicted", "pool closed before release");
    await Promise.all(this.closing);
  }
}
