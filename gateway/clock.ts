/**
 * The gateway's one source of time: monotonic milliseconds for durations and deadlines, wall-clock
 * time for what people read (timestamps, expiry dates), and the timers and sleeps that wait on it.
 * Everything that reads or waits on time takes a Clock; tests substitute a manual one.
 */
import { performance } from "node:perf_hooks";

/** A pending timer; `cancel` is safe to call more than once. */
export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Monotonic milliseconds (never jumps with the wall clock). */
  now(): number;
  /** Milliseconds since the epoch, for timestamps and dates shown to people. */
  wallNow(): number;
  /** Resolves after `ms`. */
  sleep(ms: number): Promise<void>;
  /**
   * Calls `callback` once after `ms`. With `keepAlive: false` the timer does not keep the process
   * running (background work); by default it does (a caller is waiting on it).
   */
  after(ms: number, callback: () => void, options?: { keepAlive?: boolean }): Timer;
  /** Calls `callback` every `ms`, in the background (it never keeps the process running). */
  every(ms: number, callback: () => void): Timer;
}

function timer(handle: NodeJS.Timeout, clear: (handle: NodeJS.Timeout) => void): Timer {
  return { cancel: () => clear(handle) };
}

export const systemClock: Clock = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  after(ms, callback, options) {
    const handle = setTimeout(callback, ms);
    if (options?.keepAlive === false) handle.unref();
    return timer(handle, clearTimeout);
  },
  every(ms, callback) {
    const handle = setInterval(callback, ms);
    handle.unref();
    return timer(handle, clearInterval);
  },
};

/**
 * A clock whose `now` moves only when told to (`advance`), for deterministic tests of what reads time
 * (lifetimes, lag, token expiry). Its timers and sleeps still run in real time: tests that need them
 * wait for conditions, not for the manual time.
 */
export class ManualClock implements Clock {
  constructor(private current = 0) {}

  now(): number {
    return this.current;
  }

  wallNow(): number {
    return this.current;
  }

  advance(ms: number): void {
    this.current += ms;
  }

  sleep(ms: number): Promise<void> {
    return systemClock.sleep(ms);
  }

  after(ms: number, callback: () => void, options?: { keepAlive?: boolean }): Timer {
    return systemClock.after(ms, callback, options);
  }

  every(ms: number, callback: () => void): Timer {
    return systemClock.every(ms, callback);
  }
}
