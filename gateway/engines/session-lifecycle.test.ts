import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { GatewayError } from "../errors.js";
import { type CancelStrategy, SessionLifecycle, type StatementControl, type StatementFailure } from "./session-lifecycle.js";

const GRACE_MS = 1000;

// The lifecycle reads time from node:perf_hooks; vitest's fake timers replace only the global
// `performance`, so the module's clock is pointed at the global one, fake or not.
vi.mock("node:perf_hooks", async (importOriginal) => ({
  ...(await importOriginal<typeof import("node:perf_hooks")>()),
  performance: { now: () => globalThis.performance.now() },
}));

/** A statement the test ends by hand, as a server would. */
function pendingStatement<T>(): { promise: Promise<T>; finish(value: T): void; fail(err: Error): void } {
  let finish!: (value: T) => void;
  let fail!: (err: Error) => void;
  const promise = new Promise<T>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return { promise, finish, fail };
}

class Interrupted extends Error {}
class Refused extends Error {}

/**
 * A server's side of the cancel: whether the cancel is carried out, and the cut as the engines do it
 * (the gateway gives the session up). Errors read: Interrupted is a cancelled statement, Refused a
 * statement the server failed, anything else a lost session.
 */
function fakeServer(options: { carriesOut: boolean; absorbs?: boolean }) {
  const events: string[] = [];
  const strategy: CancelStrategy = {
    name: "FAKE CANCEL",
    cancel: async () => {
      events.push("cancel");
      return options.carriesOut;
    },
    cut: () => {
      events.push("cut");
      lifecycle.closed();
    },
    classify: (err): StatementFailure => {
      if (err instanceof Interrupted) return { kind: "cancelled", cause: err };
      if (err instanceof Refused) return { kind: "refused", error: new GatewayError("DATABASE_ERROR", err.message) };
      return { kind: "session lost", cause: err as Error };
    },
    ...(options.absorbs === undefined
      ? {}
      : {
          absorbLateCancel: async () => {
            events.push("absorb");
            return options.absorbs === true;
          },
        }),
  };
  const lifecycle = new SessionLifecycle(strategy, GRACE_MS);
  return { lifecycle, events };
}

async function errorOf(work: Promise<unknown>): Promise<GatewayError> {
  const err = await work.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(err).toBeInstanceOf(GatewayError);
  return err as GatewayError;
}

describe("a session's statement deadline", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it("sends the cancel once the deadline passes and answers STATEMENT_TIMEOUT when it stops the statement", async () => {
    const { lifecycle, events } = fakeServer({ carriesOut: true });
    const statement = pendingStatement<string>();
    const running = errorOf(lifecycle.run(100, () => statement.promise));
    await vi.advanceTimersByTimeAsync(100);
    expect(events).toEqual(["cancel"]);
    expect(lifecycle.cancelPending).toBe(true);
    statement.fail(new Interrupted("interrupted"));
    const error = await running;
    expect(error.code).toBe("STATEMENT_TIMEOUT");
    expect(error.message).toBe("statement cancelled after 100ms timeout");
    // The cancel was spent on this statement: the session may be handed on.
    expect(lifecycle.cancelPending).toBe(false);
    expect(lifecycle.alive).toBe(true);
    await vi.advanceTimersByTimeAsync(GRACE_MS);
    expect(events).toEqual(["cancel"]);
  });

  it("cuts the socket after the grace when the statement does not stop, and the outcome is unknown", async () => {
    const { lifecycle, events } = fakeServer({ carriesOut: true });
    const statement = pendingStatement<string>();
    const running = errorOf(lifecycle.run(100, () => statement.promise));
    await vi.advanceTimersByTimeAsync(100 + GRACE_MS);
    expect(events).toEqual(["cancel", "cut"]);
    statement.fail(new Error("socket closed"));
    const error = await running;
    expect(error.code).toBe("OUTCOME_UNKNOWN");
    expect(error.message).toBe("statement timed out after 100ms and did not stop after its cancel (FAKE CANCEL): it may or may not have been applied");
    expect(lifecycle.alive).toBe(false);
  });

  it("cuts at once when the cancel cannot be carried out", async () => {
    const { lifecycle, events } = fakeServer({ carriesOut: false });
    const statement = pendingStatement<string>();
    const running = errorOf(lifecycle.run(100, () => statement.promise));
    await vi.advanceTimersByTimeAsync(100);
    expect(events).toEqual(["cancel", "cut"]);
    statement.fail(new Error("socket closed"));
    expect((await running).code).toBe("OUTCOME_UNKNOWN");
  });

  it("answers STATEMENT_TIMEOUT for a statement that answered after its cancel went out, not the answer", async () => {
    const { lifecycle, events } = fakeServer({ carriesOut: true, absorbs: true });
    const statement = pendingStatement<string>();
    const running = errorOf(lifecycle.run(100, () => statement.promise));
    await vi.advanceTimersByTimeAsync(100);
    // What MariaDB's KILL QUERY makes of SLEEP(): a result (1), no error.
    statement.finish("interrupted sleep's 1");
    const error = await running;
    expect(events).toEqual(["cancel", "absorb"]);
    expect(error.code).toBe("STATEMENT_TIMEOUT");
    expect(error.message).toBe("statement cancelled after 100ms timeout; the server answered after the cancel went out, and that answer is not used");
  });

  it("answers OUTCOME_UNKNOWN, not STATEMENT_TIMEOUT, for a statement that may apply changes and answered after its cancel went out", async () => {
    const { lifecycle, events } = fakeServer({ carriesOut: true, absorbs: true });
    const statement = pendingStatement<string>();
    // A write (or a COMMIT) that finished just as the cancel left: it was applied, so "no effect" would be a lie a caller acts on.
    const running = errorOf(lifecycle.run(100, () => statement.promise, false, true));
    await vi.advanceTimersByTimeAsync(100);
    statement.finish("UPDATE 1");
    const error = await running;
    expect(events).toEqual(["cancel", "absorb"]);
    expect(error.code).toBe("OUTCOME_UNKNOWN");
    expect(error.message).toBe(
      "statement timed out after 100ms, and the server answered just as its cancel (FAKE CANCEL) went out: it may have been applied (inside a transaction, as part of it); that answer is not used",
    );
    // The session itself is fine: the cancel was absorbed, and it may be reset for the next caller.
    expect(lifecycle.alive).toBe(true);
    expect(lifecycle.cancelPending).toBe(false);
  });

  it("answers the server's own error for a statement the server failed after its cancel went out", async () => {
    const { lifecycle } = fakeServer({ carriesOut: true });
    const statement = pendingStatement<string>();
    const running = errorOf(lifecycle.run(100, () => statement.promise));
    await vi.advanceTimersByTimeAsync(100);
    statement.fail(new Refused("a routine caught the cancel and raised this"));
    const error = await running;
    expect(error.code).toBe("DATABASE_ERROR");
    expect(error.message).toBe("a routine caught the cancel and raised this");
  });

  it("lets the engine absorb a cancel that went out as the statement finished, or keeps the session from being reset", async () => {
    for (const absorbs of [true, false, undefined]) {
      const { lifecycle, events } = fakeServer({ carriesOut: true, ...(absorbs === undefined ? {} : { absorbs }) });
      const statement = pendingStatement<string>();
      const running = errorOf(lifecycle.run(100, () => statement.promise));
      await vi.advanceTimersByTimeAsync(100);
      statement.finish("rows");
      expect((await running).code).toBe("STATEMENT_TIMEOUT");
      expect(events).toEqual(absorbs === undefined ? ["cancel"] : ["cancel", "absorb"]);
      expect(lifecycle.cancelPending).toBe(absorbs !== true);
      if (absorbs !== true) {
        expect(lifecycle.needsReset(false)).toBe(true);
        await expect(lifecycle.reset({ inTransaction: false, resetFully: async () => undefined, rollback: async () => undefined, releaseSessionLocks: async () => undefined }, 1000)).rejects.toThrow(
          "a cancel (FAKE CANCEL) may still land on this session",
        );
      }
    }
  });

  it("keeps each statement to its own deadline, whatever the statements before it on the session had", async () => {
    const { lifecycle, events } = fakeServer({ carriesOut: true });
    // A long deadline, then a short one: the short one is stopped at its own time.
    expect(await lifecycle.run(60_000, async () => "rows")).toBe("rows");
    const short = pendingStatement<string>();
    const stopped = errorOf(lifecycle.run(100, () => short.promise));
    await vi.advanceTimersByTimeAsync(99);
    expect(events).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(events).toEqual(["cancel"]);
    short.fail(new Interrupted("interrupted"));
    expect((await stopped).code).toBe("STATEMENT_TIMEOUT");
    // A short deadline that ended in time, then a long one: not stopped when the short one would have been.
    expect(await lifecycle.run(100, async () => "rows")).toBe("rows");
    const long = pendingStatement<string>();
    const running = lifecycle.run(1000, () => long.promise);
    await vi.advanceTimersByTimeAsync(999);
    expect(events).toEqual(["cancel"]);
    long.finish("late rows");
    expect(await running).toBe("late rows");
    await vi.advanceTimersByTimeAsync(10 * GRACE_MS);
    expect(events).toEqual(["cancel"]);
  });

  it("leaves a statement that ends in time alone", async () => {
    const { lifecycle, events } = fakeServer({ carriesOut: true });
    expect(await lifecycle.run(100, async () => "rows")).toBe("rows");
    await vi.advanceTimersByTimeAsync(10 * GRACE_MS);
    expect(events).toEqual([]);
    expect(lifecycle.cancelPending).toBe(false);
  });
});

describe("a session's death", () => {
  it("is told to every listener once, and later statements are refused before they are sent", async () => {
    const { lifecycle } = fakeServer({ carriesOut: true });
    const heard: string[] = [];
    lifecycle.onDeath((cause) => heard.push(`first: ${cause.message}`));
    lifecycle.onDeath((cause) => heard.push(`second: ${cause.message}`));
    lifecycle.died(new Error("server shut down"));
    lifecycle.died(new Error("again"));
    expect(heard).toEqual(["first: server shut down", "second: server shut down"]);
    const submit = vi.fn(async () => "never");
    expect((await errorOf(lifecycle.run(100, submit))).code).toBe("CONNECTION_LOST");
    expect(submit).not.toHaveBeenCalled();
  });

  it("answers OUTCOME_UNKNOWN for a statement the session died under, and tells the listeners", async () => {
    const { lifecycle } = fakeServer({ carriesOut: true });
    const heard: Error[] = [];
    lifecycle.onDeath((cause) => heard.push(cause));
    const error = await errorOf(lifecycle.run(10000, async () => Promise.reject(new Error("connection reset"))));
    expect(error.code).toBe("OUTCOME_UNKNOWN");
    expect(error.message).toBe("the database session died while the statement ran (connection reset): it may or may not have been applied");
    expect(heard.map((cause) => cause.message)).toEqual(["connection reset"]);
  });

  it("answers CONNECTION_LOST (nothing applied) for a statement the engine says changes nothing, unless it had timed out", async () => {
    const lost = await errorOf(fakeServer({ carriesOut: true }).lifecycle.run(10000, async () => Promise.reject(new Error("connection reset")), true));
    expect(lost.code).toBe("CONNECTION_LOST");
    expect(lost.message).toBe("the database session died while a statement that only reads ran (connection reset): nothing was applied");
    vi.useFakeTimers();
    try {
      const { lifecycle } = fakeServer({ carriesOut: true });
      const statement = pendingStatement<string>();
      const running = errorOf(lifecycle.run(100, () => statement.promise, true));
      await vi.advanceTimersByTimeAsync(100 + GRACE_MS);
      statement.fail(new Error("socket closed"));
      expect((await running).code).toBe("OUTCOME_UNKNOWN");
    } finally {
      vi.useRealTimers();
    }
  });

  it("is not told when the gateway closed the session itself", () => {
    const { lifecycle } = fakeServer({ carriesOut: true });
    const heard: Error[] = [];
    lifecycle.onDeath((cause) => heard.push(cause));
    lifecycle.closed();
    lifecycle.died(new Error("end"));
    expect(lifecycle.alive).toBe(false);
    expect(heard).toEqual([]);
  });
});

describe("the reset rule", () => {
  const session = (inTransaction: boolean) => {
    const calls: string[] = [];
    return {
      calls,
      inTransaction,
      resetFully: async () => {
        calls.push("resetFully");
      },
      rollback: async () => {
        calls.push("rollback");
      },
      releaseSessionLocks: async () => {
        calls.push("releaseSessionLocks");
      },
    };
  };

  it("only rolls back a session whose one state is an open transaction", async () => {
    const { lifecycle } = fakeServer({ carriesOut: true });
    const open = session(true);
    expect(lifecycle.needsReset(true)).toBe(true);
    expect(await lifecycle.reset(open, 1000)).toBe(false);
    expect(open.calls).toEqual(["rollback"]);
    const idle = session(false);
    expect(lifecycle.needsReset(false)).toBe(false);
    expect(await lifecycle.reset(idle, 1000)).toBe(false);
    expect(idle.calls).toEqual([]);
  });

  it("takes the full reset after a statement that may have left state, until the engine says it is cleared", async () => {
    const { lifecycle } = fakeServer({ carriesOut: true });
    lifecycle.noteStateChange();
    expect(lifecycle.mayHoldState).toBe(true);
    expect(lifecycle.needsReset(false)).toBe(true);
    const changed = session(true);
    expect(await lifecycle.reset(changed, 1000)).toBe(true);
    expect(changed.calls).toEqual(["resetFully"]);
    lifecycle.noteStateCleared();
    expect(lifecycle.needsReset(false)).toBe(false);
  });

  it("releases the session-level locks after a caller's statement, whatever it read as, until the engine says they are released", async () => {
    const { lifecycle } = fakeServer({ carriesOut: true });
    lifecycle.noteSessionLocksPossible();
    expect(lifecycle.needsReset(false)).toBe(true);
    const open = session(true);
    expect(await lifecycle.reset(open, 1000)).toBe(false);
    // One call: the engine rolls the open transaction back in the same round trip.
    expect(open.calls).toEqual(["releaseSessionLocks"]);
    lifecycle.noteSessionLocksReleased();
    expect(lifecycle.needsReset(false)).toBe(false);
  });

  it("lets the full reset stand for the lock release (it releases the locks too)", async () => {
    const { lifecycle } = fakeServer({ carriesOut: true });
    lifecycle.noteSessionLocksPossible();
    lifecycle.noteStateChange();
    const changed = session(false);
    expect(await lifecycle.reset(changed, 1000)).toBe(true);
    expect(changed.calls).toEqual(["resetFully"]);
    lifecycle.noteStateCleared();
    expect(lifecycle.mayHoldSessionLocks).toBe(false);
    expect(lifecycle.needsReset(false)).toBe(false);
  });
});

describe("a streamed statement's deadline", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it("counts only the waits for the database: stopped while the caller is waited for, restarted in full after", async () => {
    const { lifecycle, events } = fakeServer({ carriesOut: true });
    const statement = pendingStatement<string>();
    let control: StatementControl | undefined;
    const running = lifecycle.run(100, (given) => {
      control = given;
      return statement.promise;
    });
    await vi.advanceTimersByTimeAsync(90);
    control?.waitingForCaller();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(events).toEqual([]);
    control?.waitingForDatabase();
    await vi.advanceTimersByTimeAsync(90);
    expect(events).toEqual([]);
    statement.finish("done");
    expect(await running).toBe("done");
  });

  it("cancels at once when told to, and the failure says why", async () => {
    const { lifecycle, events } = fakeServer({ carriesOut: true });
    const statement = pendingStatement<string>();
    let control: StatementControl | undefined;
    const running = errorOf(
      lifecycle.run(100, (given) => {
        control = given;
        return statement.promise;
      }),
    );
    control?.waitingForCaller();
    control?.cancel("because its caller went away");
    await vi.advanceTimersByTimeAsync(0);
    expect(events).toEqual(["cancel"]);
    statement.fail(new Interrupted("interrupted"));
    const error = await running;
    expect(error.code).toBe("STATEMENT_TIMEOUT");
    expect(error.message).toBe("statement cancelled because its caller went away");
    expect(lifecycle.cancelPending).toBe(false);
  });
});
