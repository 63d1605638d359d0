/**
 * The client's retry rule: a failure is sent again only when the gateway marks it retryable (pool
 * timeout, failover in progress, a conflict that outlived the gateway's own retries...), with
 * exponential backoff and full jitter, within the call's deadline; a request that failed on the way is
 * sent once more only when it certainly never arrived or is safe to repeat (a read, a BEGIN, a write
 * under an idempotency key). A write under a key is also sent again after OUTCOME_UNKNOWN: the gateway
 * answers it from its record if it was applied, so nothing is ever applied twice.
 */
import { OutcomeUnknownError, PoolgateError, TransportError } from "./errors.js";

/** How retryable failures are retried. */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** First backoff ceiling in ms; doubles with each retry. */
  baseDelayMs: number;
  /** Largest backoff ceiling in ms. */
  maxDelayMs: number;
}

const DEFAULT_POLICY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 50, maxDelayMs: 1000 };

/**
 * Whether a failure may be sent again: the gateway's verdict, an unknown outcome of a keyed write, or a
 * transport failure that is safe to repeat.
 */
export function mayRetry(err: unknown, safeToResend: boolean, transportRetriesLeft: number, keyed = false): boolean {
  if (err instanceof OutcomeUnknownError) return keyed;
  if (err instanceof PoolgateError) return err.retryable;
  if (err instanceof TransportError) return transportRetriesLeft > 0 && (err.notSent || safeToResend);
  return false;
}

/** Runs `attempt` until it succeeds, fails for good, or the next try would not fit before `until`. */
export async function withRetries<T>(
  policy: Partial<RetryPolicy> | undefined,
  until: number | undefined,
  safeToResend: boolean,
  attempt: () => Promise<T>,
  /** The request carries an idempotency key: safe to resend, an unknown outcome included. */
  keyed = false,
): Promise<T> {
  const { maxAttempts, baseDelayMs, maxDelayMs } = { ...DEFAULT_POLICY, ...policy };
  // One reconnect: a socket that turned out dead is worth one more try, not a loop.
  let transportRetriesLeft = 1;
  for (let attemptNumber = 1; ; attemptNumber++) {
    try {
      return await attempt();
    } catch (err) {
      if (attemptNumber >= maxAttempts || !mayRetry(err, safeToResend || keyed, transportRetriesLeft, keyed)) throw err;
      if (err instanceof TransportError) transportRetriesLeft--;
      const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** (attemptNumber - 1));
      const delay = Math.random() * ceiling;
      if (until !== undefined && Date.now() + delay >= until) throw err;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
