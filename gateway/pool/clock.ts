/** The pool's one source of time (monotonic milliseconds). Tests substitute a manual clock. */
export interface Clock {
  now(): number;
}

export const monotonicClock: Clock = { now: () => performance.now() };

/** A clock that moves only when told to; for deterministic housekeeping tests. */
export class ManualClock implements Clock {
  constructor(private current = 0) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}
