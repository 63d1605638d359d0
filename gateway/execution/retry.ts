/**
 * Retry policy for work that is safe to run again, bounded by the request's own deadline (its
 * timeoutMs) rather than by a small count, so that contention slows callers down without failing
 * them. Two kinds of failure are run again:
 * - conflicts (serialization failure, deadlock, DSQL OC000/OC001): the database rolled the whole unit
 *   back; contenders back off exponentially with full jitter, which spreads them apart;
 * - work that never reached the database or committed nothing (CONNECTION_LOST), or that waited on
 *   an endpoint that stopped being the primary (PRIMARY_UNAVAILABLE, not final): it is run again at
 *   once (after a few ms of jitter) wherever the topology now points; routing itself waits for a
 *   primary during a failover.
 * OUTCOME_UNKNOWN is not retried (the work may have been applied), except for keyed writes
 * (`unknownOutcomeRetried`): their idempotency record decides on the next attempt, which either finds
 * the key committed (and answers what was recorded) or claims it and runs the work, once.
 */
import type { ErrorCode } from "../../schemas/errors.js";
import { GatewayError } from "../errors.js";
import type { Clock } from "../clock.js";
import { promiseFrom } from "../promise-from.js";
import { retryOf, type Retry, waitedOutForSession } from "./failure.js";

export interface RetrySettings {
  /** At most this many attempts; none: only the deadline (and maxTotalMs) bound the retries. */
  maxAttempts?: number | undefined;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Retries stop after this long even if the deadline is later; none: the deadline alone. */
  maxTotalMs?: number | undefined;
  /** The unit is a keyed write (gateway/idempotency/): an unknown outcome is run again at once, the record decides. */
  unknownOutcomeRetried?: boolean | undefined;
}

export interface Attempted<T> {
  value: T;
  attempts: number;
}

/** Full jitter (AWS architecture blog): a uniform delay in [0, min(maxDelay, base * 2^(conflict-1))). */
export function backoffDelayMs(settings: RetrySettings, conflict: number, random: () => number = Math.random): number {
  const cap = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (conflict - 1));
  return random() * cap;
}

/** How long to wait before running the unit again (the failure model's advice: failure.ts), or undefined when it must not be run again. */
function delayBefore(retry: Retry, settings: RetrySettings, conflicts: number): number | undefined {
  if (retry === "back off") return backoffDelayMs(settings, conflicts);
  if (retry === "now") return Math.random() * settings.baseDelayMs;
  return undefined;
}

/**
 * Runs `unit` until it succeeds, fails for good, or the next attempt would start at or after
 * `deadline` (clock ms: the request's timeoutMs from its start). Every failure carries the attempts.
 * Not async: a first attempt that succeeds is answered in the turn it ends, with no promise or turn of
 * the policy's own; retries run in `retryAfter`.
 */
export function runWithRetry<T>(
  settings: RetrySettings,
  deadline: number,
  clock: Clock,
  unit: (attempt: number) => Promise<T>,
  /** Told the code of every failure that is about to be retried. */
  onRetry?: (code: ErrorCode) => void,
): Promise<Attempted<T>> {
  return retriedAfter(promiseFrom(unit, 1), settings, deadline, clock, callUnit, unit, onRetry);
}

function callUnit<T>(unit: (attempt: number) => Promise<T>, attempt: number): Promise<T> {
  return unit(attempt);
}

/**
 * The retry policy over a first attempt already under way (`first`): later attempts are `later(arg,
 * number)`. A method and its argument rather than a closure, so that a first attempt that succeeds
 * costs the policy no allocation but its answer.
 */
export function retriedAfter<A, T>(
  first: Promise<T>,
  settings: RetrySettings,
  deadline: number,
  clock: Clock,
  later: (arg: A, attempt: number) => Promise<T>,
  arg: A,
  onRetry?: (code: ErrorCode) => void,
): Promise<Attempted<T>> {
  const startedAt = clock.now();
  return first.then(answeredAtFirst, (err: unknown) =>
    retryAfter(err, 1, { settings, deadline, clock, later, arg, onRetry, startedAt, conflicts: 0, retried: undefined }),
  );
}

/** The first attempt's answer (a module function: the hot path allocates no closure for it). */
function answeredAtFirst<T>(value: T): Attempted<T> {
  return { value, attempts: 1 };
}

/** What a run of retries carries from one failure to the next. */
interface Retries<A, T> {
  settings: RetrySettings;
  deadline: number;
  clock: Clock;
  later: (arg: A, attempt: number) => Promise<T>;
  arg: A;
  onRetry: ((code: ErrorCode) => void) | undefined;
  startedAt: number;
  conflicts: number;
  /** The failure being retried: the answer when a later attempt only ran out of the deadline waiting for a session. */
  retried: GatewayError | undefined;
}

/** After attempt `failed` failed with `err`: waits and runs the unit again while the policy allows, else throws the failure. */
async function retryAfter<A, T>(err: unknown, failed: number, retries: Retries<A, T>): Promise<Attempted<T>> {
  for (let number = failed; ; number++) {
    await retries.clock.sleep(delayAfterFailure(err, number, retries));
    try {
      return { value: await retries.later(retries.arg, number + 1), attempts: number + 1 };
    } catch (next) {
      err = next;
    }
  }
}

/** How long to wait after attempt `number` failed with `err` before the next one; throws the answer when there is to be none. */
function delayAfterFailure<A, T>(err: unknown, number: number, retries: Retries<A, T>): number {
  if (!(err instanceof GatewayError)) throw err;
  const { settings, deadline, clock } = retries;
  // A retry that spent the rest of the deadline waiting for a pooled session did not find the pool
  // exhausted: the work kept failing until its time was up, and that failure is the answer (the
  // waiter's timer rings at the deadline's millisecond, hence the one of slack).
  if (retries.retried !== undefined && waitedOutForSession(err) && clock.now() + 1 >= deadline) {
    retries.retried.attempts = number;
    throw retries.retried;
  }
  err.attempts = number;
  const retry = retryOf(err, settings.unknownOutcomeRetried === true);
  if (retry === "back off") retries.conflicts++;
  const delay = delayBefore(retry, settings, retries.conflicts);
  if (delay === undefined || (settings.maxAttempts !== undefined && number >= settings.maxAttempts)) throw err;
  const resumeAt = clock.now() + delay;
  if (resumeAt >= deadline || (settings.maxTotalMs !== undefined && resumeAt - retries.startedAt > settings.maxTotalMs)) throw err;
  retries.onRetry?.(err.code);
  retries.retried = err;
  return delay;
}
