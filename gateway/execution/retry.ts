/**
 * Retry policy for work that is safe to run again: a whole unit that the database rolled back
 * (serialization failure, deadlock, DSQL OC000/OC001), that never reached it (CONNECTION_LOST), or
 * a write a demoted primary refused (PRIMARY_UNAVAILABLE: run again once a primary is found).
 * Exponential backoff with full jitter, bounded in attempts and in total time. OUTCOME_UNKNOWN is
 * never retried: the work may have been applied.
 */
import type { ErrorCode } from "../../schemas/errors.js";
import { GatewayError } from "../errors.js";

export interface RetrySettings {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxTotalMs: number;
}

const RETRYABLE_UNITS = new Set<ErrorCode>(["SERIALIZATION_FAILURE", "CONNECTION_LOST", "PRIMARY_UNAVAILABLE"]);

export interface Attempted<T> {
  value: T;
  attempts: number;
}

/** Full jitter (AWS architecture blog): a uniform delay in [0, min(maxDelay, base * 2^(attempt-1))). */
export function backoffDelayMs(settings: RetrySettings, attempt: number, random: () => number = Math.random): number {
  const cap = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (attempt - 1));
  return random() * cap;
}

export async function runWithRetry<T>(
  settings: RetrySettings,
  unit: (attempt: number) => Promise<T>,
  /** Told the code of every failure that is about to be retried. */
  onRetry?: (code: ErrorCode) => void,
): Promise<Attempted<T>> {
  const startedAt = performance.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return { value: await unit(attempt), attempts: attempt };
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      err.attempts = attempt;
      if (!RETRYABLE_UNITS.has(err.code) || err.final || attempt >= settings.maxAttempts) throw err;
      const delay = backoffDelayMs(settings, attempt);
      if (performance.now() - startedAt + delay > settings.maxTotalMs) throw err;
      onRetry?.(err.code);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
