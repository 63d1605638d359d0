/**
 * The life of a database session that both engines share; only the way to stop a statement differs
 * (the engine's CancelStrategy). Owns:
 *
 * - the statement deadline: when a statement outlives its timeout the engine's cancel goes to the
 *   server (PostgreSQL CancelRequest, MySQL KILL QUERY); if the statement has not ended `graceMs`
 *   later, the socket is cut and the outcome is unknown;
 * - whether a cancel may still land: a cancel that went out is only known to be spent once it stopped
 *   its statement (or the engine absorbed it); until then it could interrupt whatever runs next, so
 *   the session is never reset for another caller;
 * - the reset rule: a session that may hold state (the engine notes each statement that may leave
 *   some) takes the engine's full reset; one that ran a caller's statement releases its session-level
 *   locks (and rolls back an open transaction in the same round trip); one whose only state is an
 *   open transaction, a rollback;
 * - how a failure reads to the caller: STATEMENT_TIMEOUT for every statement whose cancel went out
 *   and that the server then answered without an error (decided from the statement's deadline, never
 *   from its result) — OUTCOME_UNKNOWN instead when that statement may have applied a change, the engine's own mapping of an error the session survives, OUTCOME_UNKNOWN when the
 *   session died with the statement sent, CONNECTION_LOST when it was dead before, or when it died
 *   under a statement the engine knows changes nothing (a read by construction, outside any
 *   transaction): such a read has no outcome to be unknown;
 * - death: the session's death listeners hear it once, unless the gateway closed or cut it itself.
 */
import { performance } from "node:perf_hooks";
import { GatewayError } from "../errors.js";
import { promiseFrom } from "../promise-from.js";
import type { EngineConnection } from "./engine.js";

/** How a failed statement ended, as the engine reads its error. */
export type StatementFailure =
  /** Stopped on the server by a cancel: ours after the deadline, or the server's own statement timeout. */
  | { kind: "cancelled"; cause: Error }
  /** Refused or failed on the server, or by the driver before anything was sent: the session goes on. */
  | { kind: "refused"; error: GatewayError }
  /** The session is gone, so whatever was sent may or may not have been applied. */
  | { kind: "session lost"; cause: Error };

/** How an engine stops a statement running on the server, and reads how a statement failed. */
export interface CancelStrategy {
  /** The cancel's name in messages ("CancelRequest", "KILL QUERY"). */
  readonly name: string;
  /**
   * Sends the cancel for the statement running now; never rejects. Resolves true when the server
   * carried it out, or may have (a CancelRequest has no answer), false when it surely could not be
   * (the socket is then cut at once rather than after the grace).
   */
  cancel(graceMs: number): Promise<boolean>;
  /** Cuts the socket: the session is given up. */
  cut(): void;
  /** Reads a statement's failure; `timedOut`: its deadline passed while it ran. */
  classify(err: unknown, timedOut: boolean): StatementFailure;
  /**
   * After a statement that ended on its own just as its cancel went out: lets the cancel land on
   * something harmless. Resolves true when it can no longer reach the next statement. Without it the
   * session stays marked (and is not handed on).
   */
  absorbLateCancel?(graceMs: number): Promise<boolean>;
}

/** What the reset rule needs of the engine's session. */
export interface ResettableSession extends Pick<EngineConnection, "inTransaction" | "resetFully" | "rollback"> {
  /**
   * Releases every session-level lock (and rolls back an open transaction first, in the same round
   * trip); the session's other state is left as it is.
   */
  releaseSessionLocks(timeoutMs: number): Promise<void>;
}

/**
 * What a streamed statement tells its deadline: the clock runs only while the gateway waits for the
 * database, not while the database waits for the gateway's caller; and the statement can be stopped
 * at once (its caller went away) by the same cancel, grace and cut.
 */
export interface StatementControl {
  /** The gateway stopped asking for rows: the deadline is suspended. */
  waitingForCaller(): void;
  /** The gateway asks the database for rows again: the deadline restarts from its full length. */
  waitingForDatabase(): void;
  /** Stops the statement now, as if its deadline had passed; `reason` becomes the failure's message. */
  cancel(reason: string): void;
}

/**
 * The one timer behind a session's statement deadlines: a statement sets no timer of its own. The
 * alarm is set for the earliest deadline of the statements running; one that ends early leaves it
 * set, and when it rings for a statement that has ended (or whose deadline moved later) it is set
 * again for the next deadline, or not at all. Statements with equal timeouts, one after another,
 * thus cost no timer each: the alarm rings about once per timeout. It never keeps the process alive
 * (the session's socket does that while a statement runs).
 */
class DeadlineAlarm {
  /**
   * An array, not a Set: it holds one statement at a time but for a stream's, and a Set that empties
   * after every statement shrinks (rehashes) each time.
   */
  private readonly running: StatementDeadline[] = [];
  private timer: NodeJS.Timeout | undefined;
  private ringsAt = Number.POSITIVE_INFINITY;

  /** A statement started, or its deadline moved (a stream asks for rows again). */
  watch(deadline: StatementDeadline): void {
    if (!this.running.includes(deadline)) this.running.push(deadline);
    if (deadline.dueAt < this.ringsAt) this.set(deadline.dueAt);
  }

  /** The statement ended; the alarm stays set for whoever runs next. */
  forget(deadline: StatementDeadline): void {
    const at = this.running.indexOf(deadline);
    if (at < 0) return;
    this.running[at] = this.running[this.running.length - 1] as StatementDeadline;
    this.running.pop();
  }

  /** The session is gone: nothing more to ring for. */
  close(): void {
    this.running.length = 0;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.ringsAt = Number.POSITIVE_INFINITY;
  }

  private set(at: number): void {
    clearTimeout(this.timer);
    this.ringsAt = at;
    this.timer = setTimeout(() => this.ring(), Math.max(0, at - performance.now()));
    this.timer.unref();
  }

  private ring(): void {
    this.timer = undefined;
    this.ringsAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const deadline of [...this.running]) {
      if (deadline.dueAt <= now) {
        this.forget(deadline);
        deadline.expire();
      } else if (deadline.dueAt < next) next = deadline.dueAt;
    }
    if (next !== Number.POSITIVE_INFINITY) this.set(next);
  }
}

/** The deadline of one statement: past it, the cancel; past the grace after that, the cut. */
class StatementDeadline implements StatementControl {
  /** Set once the deadline passed: whether the cancel was carried out (or may have been). */
  cancelled: Promise<boolean> | undefined;
  /** Why the statement was stopped before its deadline, when it was (StatementControl.cancel). */
  reason: string | undefined;
  /** When the deadline passes (performance.now() ms); +Infinity while the database waits for the caller. */
  dueAt: number;
  private cutTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly timeoutMs: number,
    private readonly graceMs: number,
    private readonly strategy: CancelStrategy,
    private readonly alarm: DeadlineAlarm,
    private readonly onTimeout: () => void,
  ) {
    this.dueAt = performance.now() + timeoutMs;
    alarm.watch(this);
  }

  get passed(): boolean {
    return this.cancelled !== undefined;
  }

  waitingForCaller(): void {
    this.dueAt = Number.POSITIVE_INFINITY;
  }

  waitingForDatabase(): void {
    if (this.passed) return;
    this.dueAt = performance.now() + this.timeoutMs;
    this.alarm.watch(this);
  }

  cancel(reason: string): void {
    if (this.passed) return;
    this.reason = reason;
    this.expire();
  }

  stop(): void {
    this.alarm.forget(this);
    if (this.cutTimer) clearTimeout(this.cutTimer);
  }

  /** The deadline passed (the alarm rang), or the statement is stopped now: the cancel, then the cut after the grace. */
  expire(): void {
    if (this.passed) return;
    this.alarm.forget(this);
    this.onTimeout();
    this.cancelled = this.strategy.cancel(this.graceMs).then((carriedOut) => {
      if (!carriedOut) this.strategy.cut();
      return carriedOut;
    });
    this.cutTimer = setTimeout(() => this.strategy.cut(), this.graceMs);
  }
}

export class SessionLifecycle {
  private dead = false;
  private cancelMayLand = false;
  private stateChanged = false;
  private sessionLocksPossible = false;
  private readonly deathListeners: ((cause: Error) => void)[] = [];
  private readonly alarm = new DeadlineAlarm();

  constructor(
    private readonly strategy: CancelStrategy,
    private readonly graceMs: number,
  ) {}

  /** False once the session died or was closed. */
  get alive(): boolean {
    return !this.dead;
  }

  /** A cancel went out and may still land on whatever runs next. */
  get cancelPending(): boolean {
    return this.cancelMayLand;
  }

  onDeath(listener: (cause: Error) => void): void {
    this.deathListeners.push(listener);
  }

  /** The session died on its own (server, network): its listeners hear it, once. */
  died(cause: Error): void {
    if (this.dead) return;
    this.dead = true;
    this.alarm.close();
    for (const listener of this.deathListeners) listener(cause);
  }

  /** The gateway closed or cut the session itself: nobody needs telling. */
  closed(): void {
    this.dead = true;
    this.alarm.close();
  }

  /** A statement's cancel went out: until it is known spent, it may land on whatever runs next. */
  private readonly noteCancelSent = (): void => {
    this.cancelMayLand = true;
  };

  /** Whether a statement since the last full reset may have left session state (settings, temporary tables, locks...). */
  get mayHoldState(): boolean {
    return this.stateChanged;
  }

  /** A statement may leave session state behind: the next reset is the full one. */
  noteStateChange(): void {
    this.stateChanged = true;
  }

  /** The engine's full reset ran: the session is as just connected. */
  noteStateCleared(): void {
    this.stateChanged = false;
    this.sessionLocksPossible = false;
  }

  /**
   * Whether a caller's statement ran since the session's locks were last released. Any statement
   * may take a session-level lock (PostgreSQL advisory, MySQL GET_LOCK) that the SQL reader cannot
   * see: through a view, a rule, a trigger, a column default, a row-level security policy or a
   * function that lies about its volatility. So none is trusted not to, and the locks are released
   * before the session goes back to the pool, by the engine's cheapest round trip for it.
   */
  get mayHoldSessionLocks(): boolean {
    return this.sessionLocksPossible;
  }

  /** A caller's statement is about to run: it may take a session-level lock. */
  noteSessionLocksPossible(): void {
    this.sessionLocksPossible = true;
  }

  /** The engine released every session-level lock (folded into a rollback, or on its own). */
  noteSessionLocksReleased(): void {
    this.sessionLocksPossible = false;
  }

  /** Whether the session must be reset before another caller gets it. */
  needsReset(inTransaction: boolean): boolean {
    return this.stateChanged || this.cancelMayLand || inTransaction || this.sessionLocksPossible;
  }

  /**
   * Resets the session for the next caller of the same principal by the rule above, with the
   * engine's own full reset and rollback. Resolves true when the full reset ran.
   */
  async reset(session: ResettableSession, timeoutMs: number): Promise<boolean> {
    this.refuseResetWhileCancelPending();
    if (this.stateChanged) {
      await session.resetFully(timeoutMs);
      return true;
    }
    if (this.sessionLocksPossible) await session.releaseSessionLocks(timeoutMs);
    else if (session.inTransaction) await session.rollback(timeoutMs);
    return false;
  }

  /** Throws when a cancel may still land: such a session is evicted, never reset for another caller. */
  refuseResetWhileCancelPending(): void {
    if (this.cancelMayLand) throw new Error(`a cancel (${this.strategy.name}) may still land on this session`);
  }

  /**
   * Runs one statement (`submit` sends it and settles when it ends) under its deadline, and turns a
   * failure into the gateway's error. A streamed statement drives its deadline through `control`.
   */
  run<T>(timeoutMs: number, submit: (control: StatementControl) => Promise<T>, changesNothing = false, mayApply = false): Promise<T> {
    if (this.dead) return Promise.reject(new GatewayError("CONNECTION_LOST", "the database session closed before the statement was sent"));
    const deadline = new StatementDeadline(timeoutMs, this.graceMs, this.strategy, this.alarm, this.noteCancelSent);
    // Not async: a statement that ended in time is answered in the turn its result arrives, with no
    // promise or turn of the lifecycle's own; a cancelled or failed one takes the slow paths below.
    return promiseFrom(submit, deadline).then(
      (result) => {
        if (deadline.passed) return this.afterLateEnd(deadline, timeoutMs, mayApply);
        deadline.stop();
        return result;
      },
      (err: unknown) => this.afterFailure(err, deadline, timeoutMs, changesNothing),
    );
  }

  /**
   * The statement answered without an error although its cancel went out. The server may have
   * stopped it without saying so (MariaDB's KILL QUERY makes SLEEP() return 1 and BENCHMARK() 0, and
   * DO succeeds), or it finished as the cancel left: the gateway cannot tell, and gave up on it at its
   * deadline, so the answer is not passed on. A statement that may apply changes (`mayApply`: a
   * caller's write, or SQL the engine cannot prove only reads) may have been applied just as the cancel
   * left, so it is OUTCOME_UNKNOWN, never STATEMENT_TIMEOUT ("no effect"), which a caller would send
   * again. The cancel may land on the next statement unless the engine absorbs it; a failure on the way
   * is the statement's.
   */
  private async afterLateEnd(deadline: StatementDeadline, timeoutMs: number, mayApply: boolean): Promise<never> {
    try {
      await this.absorbLateCancel(deadline.cancelled as Promise<boolean>);
    } catch (err) {
      return this.afterFailure(err, deadline, timeoutMs);
    }
    deadline.stop();
    if (mayApply) {
      const why = deadline.reason === undefined ? `timed out after ${timeoutMs}ms` : `was cancelled ${deadline.reason}`;
      throw new GatewayError(
        "OUTCOME_UNKNOWN",
        `statement ${why}, and the server answered just as its cancel (${this.strategy.name}) went out: it may have been applied (inside a transaction, as part of it); that answer is not used`,
      );
    }
    throw this.cancelled(deadline.reason, timeoutMs, "; the server answered after the cancel went out, and that answer is not used");
  }

  /** The statement failed: classified, once whether its cancel was carried out is known (that decides whether it can still reach the next statement). */
  private async afterFailure(err: unknown, deadline: StatementDeadline, timeoutMs: number, changesNothing = false): Promise<never> {
    try {
      const carriedOut = deadline.cancelled ? await deadline.cancelled : false;
      throw this.failure(err, deadline.passed, carriedOut, timeoutMs, deadline.reason, changesNothing);
    } finally {
      deadline.stop();
    }
  }

  /** The statement ended on its own although its cancel went out: the cancel may land on the next one. */
  private async absorbLateCancel(cancelled: Promise<boolean>): Promise<void> {
    if (!(await cancelled) || this.dead || !this.strategy.absorbLateCancel) return;
    if (await this.strategy.absorbLateCancel(this.graceMs)) this.cancelMayLand = false;
  }

  private failure(err: unknown, timedOut: boolean, cancelCarriedOut: boolean, timeoutMs: number, reason: string | undefined, changesNothing: boolean): GatewayError {
    const failure = this.strategy.classify(err, timedOut);
    // A statement the server failed is answered with the server's error, even after the cancel went
    // out (a syntax error met as the 1 ms deadline passed, a routine that caught the cancel and raised
    // another error): an error is never mistaken for the answer, and SQL that commits in parts is
    // answered as its errors always are, not as an unknown outcome.
    if (failure.kind === "refused") return failure.error;
    if (failure.kind === "cancelled") {
      // Our cancel stopped this statement, so it cannot reach the next one.
      if (cancelCarriedOut) this.cancelMayLand = false;
      return this.cancelled(reason, timeoutMs, "", failure.cause);
    }
    this.died(failure.cause);
    if (changesNothing && !timedOut) {
      return new GatewayError("CONNECTION_LOST", `the database session died while a statement that only reads ran (${failure.cause.message}): nothing was applied`, {
        cause: failure.cause,
      });
    }
    const why = timedOut
      ? `statement ${reason === undefined ? `timed out after ${timeoutMs}ms` : `was cancelled ${reason}`} and did not stop after its cancel (${this.strategy.name})`
      : `the database session died while the statement ran (${failure.cause.message})`;
    return new GatewayError("OUTCOME_UNKNOWN", `${why}: it may or may not have been applied`, { cause: failure.cause });
  }

  /** The one answer for a statement the gateway cancelled (at its deadline, or for `reason`), whatever the server did next. */
  private cancelled(reason: string | undefined, timeoutMs: number, afterwards: string, cause?: unknown): GatewayError {
    const why = reason ?? `after ${timeoutMs}ms timeout`;
    return new GatewayError("STATEMENT_TIMEOUT", `statement cancelled ${why}${afterwards}`, cause === undefined ? {} : { cause });
  }
}
