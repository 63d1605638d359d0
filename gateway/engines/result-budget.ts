/**
 * The result-size bounds of one statement (ExecuteOptions.maxResultRows and maxResultBytes), enforced
 * while rows stream in from either engine: once a bound is passed the rows kept so far are dropped
 * and every later row is skipped unread, so an oversized result never sits in memory; the statement
 * still runs to its end on the server, and the caller gets RESULT_TOO_LARGE.
 */
import { GatewayError } from "../errors.js";

export interface ResultLimits {
  maxRows: number;
  /** Counted as each engine measures a row: the values' text (PostgreSQL) or their approximate JSON size (MySQL). */
  maxBytes: number;
}

/** Bounds for the gateway's own short statements (role checks, lookups), which are never large. */
export const INTERNAL_RESULT_LIMITS: ResultLimits = Object.freeze({ maxRows: 1000, maxBytes: 1 << 20 });

export class ResultBudget {
  private rowsSeen = 0;
  private bytes = 0;
  private exceeded = false;

  constructor(private readonly limits: ResultLimits) {}

  /** True once a bound was passed: nothing of the result is returned. */
  get overLimit(): boolean {
    return this.exceeded;
  }

  /** Counts a row the server sent. False when the result is already over a bound: skip the row unread. */
  nextRow(): boolean {
    this.rowsSeen++;
    return !this.exceeded;
  }

  /** Adds the size of the row just counted. False when that passes a bound: drop the rows kept so far. */
  keep(rowBytes: number): boolean {
    this.bytes += rowBytes;
    if (this.rowsSeen > this.limits.maxRows || this.bytes > this.limits.maxBytes) this.exceeded = true;
    return !this.exceeded;
  }

  /** The error for a result over a bound, with what was seen of it. */
  tooLarge(): GatewayError {
    return new GatewayError(
      "RESULT_TOO_LARGE",
      `the statement ran (a write outside a transaction is committed) but its result exceeds the limit of ${this.limits.maxRows} rows or ${this.limits.maxBytes} bytes (saw at least ${this.rowsSeen} rows, ${this.bytes} bytes); add a LIMIT or select fewer columns`,
    );
  }
}
