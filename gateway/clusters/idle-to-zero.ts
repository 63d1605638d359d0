/**
 * The idle policy of a cluster whose database may pause (Aurora Serverless v2 at 0 ACUs): after
 * `quietMs` with no session lent and none borrowed, every pool and the topology monitor release their
 * sessions and the cluster's background work that opens sessions stops, so that the database sees no
 * connection and may pause. The first caller after that wakes its pool: a resume window opens on every
 * pool (callers wait within their own deadlines, connects may take the resume's time, a caller whose
 * deadline ends first gets DATABASE_RESUMING), and the first connection that opens ends it — the
 * monitor checks again and the background work restarts. The mechanism is the pools' and the
 * monitor's (rest, wake, expectResume); this file is the policy: when to rest, how long to wait.
 */
import type { IdleStatus } from "../../schemas/health.js";
import type { IdleToZeroConfig } from "../config/schema.js";
import type { Clock, Timer } from "../clock.js";
import type { Logger } from "../logger.js";
import type { Pool, ResumeWindow } from "../pool/pool.js";

/** AWS: a resume takes about 15 s (docs/aurora.md#serverless-v2-auto-pause); Retry-After counts down from it. */
export const TYPICAL_RESUME_MS = 15000;

export type IdleState = IdleStatus["state"];

/** What the policy rests and wakes: the cluster's parts, seen from here. */
export interface RestingParts {
  pools(): Iterable<Pool>;
  /** Whether anything holds the database now (open interactive transactions, a failover under way, no primary known). */
  busy(): boolean;
  /** The topology monitor and the background work that opens sessions (discovery, idempotency cleanup). */
  rest(): void;
  wake(): void;
}

export class IdleToZero {
  private state: IdleState = "active";
  private sinceWall: number;
  private resumeStartedAt = 0;
  private lastResumeMs: number | null = null;
  private timer: Timer | undefined;
  private giveUpTimer: Timer | undefined;
  private readonly startedAt: number;

  constructor(
    private readonly name: string,
    private readonly settings: IdleToZeroConfig,
    private readonly parts: RestingParts,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    this.sinceWall = clock.wallNow();
    this.startedAt = clock.now();
  }

  /** Starts looking for quiet, a few times per quiet period. */
  start(): void {
    const interval = Math.max(50, Math.min(1000, Math.floor(this.settings.quietMs / 4)));
    this.timer = this.clock.every(interval, () => this.restIfQuiet());
  }

  stop(): void {
    this.timer?.cancel();
    this.giveUpTimer?.cancel();
  }

  status(): IdleStatus {
    return { state: this.state, since: new Date(this.sinceWall).toISOString(), lastResumeMs: this.lastResumeMs };
  }

  /** Rests everything when no session was lent for quietMs and none is borrowed, waited for or opening. */
  restIfQuiet(): void {
    if (this.state !== "active" || this.parts.busy()) return;
    const now = this.clock.now();
    const pools = [...this.parts.pools()];
    for (const pool of pools) {
      const stats = pool.stats();
      if (stats.active > 0 || stats.waiting > 0 || stats.pendingCreates > 0) return;
      if (pool.lastLentAt !== undefined && now - pool.lastLentAt < this.settings.quietMs) return;
    }
    // A cluster that has not lent a session since start counts from its start.
    if (pools.every((pool) => pool.lastLentAt === undefined) && now - this.startedAt < this.settings.quietMs) return;
    this.enter("idle");
    for (const pool of pools) {
      pool.restListener = this.listener;
      pool.rest();
    }
    this.parts.rest();
    this.logger.info({ cluster: this.name, quietMs: this.settings.quietMs }, "idle: every session released; the database may pause");
  }

  private readonly listener = {
    woken: (pool: Pool): void => this.woken(pool),
    resumed: (_pool: Pool): void => this.resumed(),
  };

  /** A caller asked a pool at rest: the database may be paused, so every pool waits for its resume. */
  private woken(pool: Pool): void {
    const now = this.clock.now();
    const window = this.windowFrom(now);
    if (this.state !== "idle") {
      // Another pool (a reader's, another login's) kept at rest after the resume: its instance may
      // still be paused (a reader in promotion tier 2-15 pauses on its own), so it waits the same way.
      if (this.state === "active") pool.expectResume(window);
      return;
    }
    this.resumeStartedAt = now;
    this.enter("resuming");
    for (const each of this.parts.pools()) each.expectResume(window);
    this.giveUpTimer = this.clock.after(this.settings.resumeTimeoutMs, () => this.gaveUp(), { keepAlive: false });
    this.logger.info({ cluster: this.name }, "idle: a request arrived; waiting for the database to resume");
  }

  private windowFrom(now: number): ResumeWindow {
    return {
      until: now + this.settings.resumeTimeoutMs,
      retryAfterS: (at) => Math.max(1, Math.ceil((now + TYPICAL_RESUME_MS - at) / 1000)),
    };
  }

  /** The database answered: back to normal, the monitor checks again. */
  private resumed(): void {
    if (this.state !== "resuming") return;
    this.giveUpTimer?.cancel();
    this.lastResumeMs = Math.round(this.clock.now() - this.resumeStartedAt);
    this.endWindow();
    this.logger.info({ cluster: this.name, resumeMs: this.lastResumeMs }, "idle: the database answered again");
  }

  /** No connection opened within resumeTimeoutMs: not a pause any more but an outage, told as such. */
  private gaveUp(): void {
    if (this.state !== "resuming") return;
    this.endWindow();
    this.logger.warn({ cluster: this.name, resumeTimeoutMs: this.settings.resumeTimeoutMs }, "idle: the database did not resume in time; treated as unavailable");
  }

  private endWindow(): void {
    // Pools nobody asked stay at rest (their instances may be paused apart) until a caller asks.
    for (const pool of this.parts.pools()) pool.expectResume(undefined);
    this.enter("active");
    this.parts.wake();
  }

  private enter(state: IdleState): void {
    this.state = state;
    this.sinceWall = this.clock.wallNow();
  }
}
