/**
 * The figures kept for one (principal, fingerprint) in one time slice: calls, errors by code, rows,
 * time in all and split into waiting and database time, a latency histogram for percentiles, when it
 * was last seen, and one sample text (literals removed by the engine's reader). Figures of several
 * slices, or of entries pushed out to `other`, merge by addition.
 */
import type { WorkRun } from "../events.js";

/**
 * Latency buckets grow by 10% from 0.1 ms: a percentile read from them is the bucket's upper bound,
 * at most 10% above the true value (and never above the largest time seen). Sparse: a statement's
 * times fall in a handful of buckets.
 */
const GROWTH = 1.1;
const LOG_GROWTH = Math.log(GROWTH);
const FLOOR_MS = 0.1;

function bucketOf(ms: number): number {
  return ms <= FLOOR_MS ? 0 : Math.ceil(Math.log(ms / FLOOR_MS) / LOG_GROWTH);
}

function upperBoundOf(bucket: number): number {
  return FLOOR_MS * GROWTH ** bucket;
}

/** Error codes kept per entry; further codes count under "other" (codes are few: the registry's, plus SQLSTATEs). */
const MAX_ERROR_CODES = 16;

export class StatementStats {
  calls = 0;
  rows = 0;
  totalMs = 0;
  databaseMs = 0;
  maxMs = 0;
  lastSeenAt = 0;
  readonly errors = new Map<string, number>();
  private readonly latency = new Map<number, number>();

  constructor(public sample: string) {}

  add(run: WorkRun, at: number): void {
    this.calls++;
    this.rows += run.rows;
    this.totalMs += run.totalMs;
    // Clocks read at two places: the database's part is never more than the whole.
    this.databaseMs += Math.min(run.databaseMs, run.totalMs);
    if (run.totalMs > this.maxMs) this.maxMs = run.totalMs;
    if (at > this.lastSeenAt) this.lastSeenAt = at;
    if (run.error !== undefined) this.countError(run.error, 1);
    const bucket = bucketOf(run.totalMs);
    this.latency.set(bucket, (this.latency.get(bucket) ?? 0) + 1);
  }

  merge(other: StatementStats): void {
    this.calls += other.calls;
    this.rows += other.rows;
    this.totalMs += other.totalMs;
    this.databaseMs += other.databaseMs;
    if (other.maxMs > this.maxMs) this.maxMs = other.maxMs;
    if (other.lastSeenAt > this.lastSeenAt) this.lastSeenAt = other.lastSeenAt;
    for (const [code, count] of other.errors) this.countError(code, count);
    for (const [bucket, count] of other.latency) this.latency.set(bucket, (this.latency.get(bucket) ?? 0) + count);
  }

  get waitMs(): number {
    return this.totalMs - this.databaseMs;
  }

  get errorCount(): number {
    let count = 0;
    for (const n of this.errors.values()) count += n;
    return count;
  }

  /** The time below which `fraction` of the calls ended (upper bound of its bucket, at most the largest seen). */
  percentileMs(fraction: number): number {
    if (this.calls === 0) return 0;
    const rank = Math.ceil(fraction * this.calls);
    let seen = 0;
    for (const bucket of [...this.latency.keys()].sort((a, b) => a - b)) {
      seen += this.latency.get(bucket) ?? 0;
      if (seen >= rank) return Math.min(upperBoundOf(bucket), this.maxMs);
    }
    return this.maxMs;
  }

  private countError(code: string, count: number): void {
    const key = this.errors.has(code) || this.errors.size < MAX_ERROR_CODES ? code : "other";
    this.errors.set(key, (this.errors.get(key) ?? 0) + count);
  }
}
