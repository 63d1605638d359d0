/**
 * What a pool tells the log about an endpoint it cannot reach: one warning when connecting starts to
 * fail, a reminder with the count while it goes on, and one line with the count and the outage's
 * length when a connection opens again. A dead endpoint is retried with backoff every few hundred
 * milliseconds; one warning per attempt would bury everything else in the log.
 */
import type { Logger } from "../logger.js";

/** While connecting keeps failing, a warning this often says so (each failure is logged at debug). */
const REMINDER_INTERVAL_MS = 60_000;

export class ConnectFailureLog {
  /** When the current run of failures began (wall clock ms), or undefined while connecting works. */
  private failingSince: number | undefined;
  private failures = 0;
  private remindedAt = 0;

  constructor(
    private readonly pool: string,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** A connect attempt failed; `error` is the driver's words, for operators only. */
  failed(error: string): void {
    const now = this.now();
    this.failures++;
    if (this.failingSince === undefined) {
      this.failingSince = now;
      this.remindedAt = now;
      this.logger.warn({ pool: this.pool, error }, "connect failed; retrying with backoff (further failures are counted, not logged one by one)");
      return;
    }
    this.logger.debug({ pool: this.pool, failures: this.failures, error }, "connect failed again");
    if (now - this.remindedAt >= REMINDER_INTERVAL_MS) {
      this.remindedAt = now;
      this.logger.warn({ pool: this.pool, failures: this.failures, downForMs: now - this.failingSince, error }, "still cannot connect");
    }
  }

  /** A connection opened: ends a run of failures, if there was one. */
  connected(): void {
    if (this.failingSince === undefined) return;
    this.logger.info({ pool: this.pool, failures: this.failures, downForMs: this.now() - this.failingSince }, "connected again");
    this.failingSince = undefined;
    this.failures = 0;
  }
}
