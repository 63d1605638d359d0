import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.js";
import { systemClock } from "../clock.js";
import { backoffDelayMs, runWithRetry } from "./retry.js";

const settings = { baseDelayMs: 1, maxDelayMs: 8 };
const clock = systemClock;
const inMs = (ms: number) => clock.now() + ms;

describe("retry policy", () => {
  it("draws full-jitter delays below an exponentially growing, capped ceiling", () => {
    expect(backoffDelayMs(settings, 1, () => 0.999)).toBeLessThan(1);
    expect(backoffDelayMs(settings, 3, () => 0.999)).toBeLessThan(4);
    expect(backoffDelayMs(settings, 10, () => 0.999)).toBeLessThan(8);
    expect(backoffDelayMs(settings, 10, () => 0)).toBe(0);
  });

  it("re-runs a unit the database rolled back, and counts the attempts", async () => {
    let calls = 0;
    const result = await runWithRetry(settings, inMs(1000), clock, async () => {
      if (++calls < 3) throw new GatewayError("SERIALIZATION_FAILURE", "conflict");
      return "ok";
    });
    expect(result).toEqual({ value: "ok", attempts: 3 });
  });

  it("keeps re-running conflicts for as long as the deadline allows, not a fixed count", async () => {
    let calls = 0;
    const result = await runWithRetry(settings, inMs(10000), clock, async () => {
      if (++calls < 40) throw new GatewayError("SERIALIZATION_FAILURE", "conflict");
      return "ok";
    });
    expect(result.attempts).toBe(40);
  });

  it("stops at the deadline and reports the attempts on the error", async () => {
    let calls = 0;
    const error = (await runWithRetry({ baseDelayMs: 5, maxDelayMs: 5 }, inMs(60), clock, async () => {
      calls++;
      throw new GatewayError("CONNECTION_LOST", "gone");
    }).catch((err: unknown) => err)) as GatewayError;
    expect(error.code).toBe("CONNECTION_LOST");
    expect(error.attempts).toBe(calls);
    expect(calls).toBeGreaterThan(1);
  });

  it("stops after maxAttempts or maxTotalMs when they are set", async () => {
    const attempts = (await runWithRetry({ ...settings, maxAttempts: 4 }, inMs(10000), clock, async () => {
      throw new GatewayError("CONNECTION_LOST", "gone");
    }).catch((err: unknown) => err)) as GatewayError;
    expect(attempts.attempts).toBe(4);
    let calls = 0;
    const total = (await runWithRetry({ baseDelayMs: 50, maxDelayMs: 50, maxTotalMs: 1 }, inMs(10000), clock, async () => {
      calls++;
      throw new GatewayError("SERIALIZATION_FAILURE", "conflict");
    }).catch((err: unknown) => err)) as GatewayError;
    expect(total.code).toBe("SERIALIZATION_FAILURE");
    expect(calls).toBeLessThan(10);
  });

  it("re-runs work that waited on a former primary, but not a final PRIMARY_UNAVAILABLE", async () => {
    let calls = 0;
    const moved = await runWithRetry(settings, inMs(1000), clock, async () => {
      if (++calls < 2) throw new GatewayError("PRIMARY_UNAVAILABLE", "no longer the primary");
      return "ok";
    });
    expect(moved.attempts).toBe(2);
    calls = 0;
    const final = (await runWithRetry(settings, inMs(1000), clock, async () => {
      calls++;
      throw new GatewayError("PRIMARY_UNAVAILABLE", "none in time", { final: true });
    }).catch((err: unknown) => err)) as GatewayError;
    expect(calls).toBe(1);
    expect(final.attempts).toBe(1);
  });

  it("never re-runs work whose outcome is unknown, nor ordinary database errors", async () => {
    for (const code of ["OUTCOME_UNKNOWN", "DATABASE_ERROR", "STATEMENT_TIMEOUT"] as const) {
      let calls = 0;
      const error = (await runWithRetry(settings, inMs(1000), clock, async () => {
        calls++;
        throw new GatewayError(code, "no");
      }).catch((err: unknown) => err)) as GatewayError;
      expect(calls).toBe(1);
      expect(error.attempts).toBe(1);
    }
  });

  it("never re-runs an unknown outcome, except a keyed write's, whose idempotency record decides the next attempt", async () => {
    let calls = 0;
    const unknown = async () => {
      if (++calls === 1) throw new GatewayError("OUTCOME_UNKNOWN", "lost after COMMIT");
      return "recorded";
    };
    const plain = (await runWithRetry(settings, inMs(1000), clock, unknown).catch((err: unknown) => err)) as GatewayError;
    expect(plain.code).toBe("OUTCOME_UNKNOWN");
    expect(plain.attempts).toBe(1);
    calls = 0;
    expect(await runWithRetry({ ...settings, unknownOutcomeRetried: true }, inMs(1000), clock, unknown)).toEqual({ value: "recorded", attempts: 2 });
  });

  it("answers the failure it kept retrying when the last attempt only ran out of the deadline waiting for a session", async () => {
    let calls = 0;
    const deadline = inMs(80);
    const error = (await runWithRetry(settings, deadline, clock, async () => {
      calls++;
      if (clock.now() + 20 < deadline) throw new GatewayError("CONNECTION_LOST", "the statement ended its own session");
      // The pool's waiter gives up at the request's deadline.
      await clock.sleep(Math.max(0, deadline - clock.now()));
      throw new GatewayError("POOL_TIMEOUT", "no connection available after 0ms");
    }).catch((err: unknown) => err)) as GatewayError;
    expect(error.code).toBe("CONNECTION_LOST");
    expect(error.attempts).toBe(calls);
    expect(calls).toBeGreaterThan(1);
  });

  it("still answers POOL_TIMEOUT when the pool, not the deadline, ran out", async () => {
    let calls = 0;
    const error = (await runWithRetry(settings, inMs(10_000), clock, async () => {
      if (++calls === 1) throw new GatewayError("CONNECTION_LOST", "gone");
      throw new GatewayError("POOL_TIMEOUT", "no connection available after 2000ms");
    }).catch((err: unknown) => err)) as GatewayError;
    expect(error.code).toBe("POOL_TIMEOUT");
    expect(error.attempts).toBe(2);
  });
});
