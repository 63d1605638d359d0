import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.js";
import { backoffDelayMs, runWithRetry } from "./retry.js";

const settings = { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 8, maxTotalMs: 1000 };

describe("retry policy", () => {
  it("draws full-jitter delays below an exponentially growing, capped ceiling", () => {
    expect(backoffDelayMs(settings, 1, () => 0.999)).toBeLessThan(1);
    expect(backoffDelayMs(settings, 3, () => 0.999)).toBeLessThan(4);
    expect(backoffDelayMs(settings, 10, () => 0.999)).toBeLessThan(8);
    expect(backoffDelayMs(settings, 10, () => 0)).toBe(0);
  });

  it("re-runs a unit the database rolled back, and counts the attempts", async () => {
    let calls = 0;
    const result = await runWithRetry(settings, async () => {
      if (++calls < 3) throw new GatewayError("SERIALIZATION_FAILURE", "conflict");
      return "ok";
    });
    expect(result).toEqual({ value: "ok", attempts: 3 });
  });

  it("gives up after maxAttempts and reports them on the error", async () => {
    const error = (await runWithRetry(settings, async () => {
      throw new GatewayError("CONNECTION_LOST", "gone");
    }).catch((err: unknown) => err)) as GatewayError;
    expect(error.code).toBe("CONNECTION_LOST");
    expect(error.attempts).toBe(4);
  });

  it("never re-runs work whose outcome is unknown, nor ordinary database errors", async () => {
    for (const code of ["OUTCOME_UNKNOWN", "DATABASE_ERROR", "STATEMENT_TIMEOUT"] as const) {
      let calls = 0;
      const error = (await runWithRetry(settings, async () => {
        calls++;
        throw new GatewayError(code, "no");
      }).catch((err: unknown) => err)) as GatewayError;
      expect(calls).toBe(1);
      expect(error.attempts).toBe(1);
    }
  });

  it("stops when the next delay would pass maxTotalMs", async () => {
    let calls = 0;
    const error = (await runWithRetry({ ...settings, maxAttempts: 100, baseDelayMs: 50, maxDelayMs: 50, maxTotalMs: 1 }, async () => {
      calls++;
      throw new GatewayError("SERIALIZATION_FAILURE", "conflict");
    }).catch((err: unknown) => err)) as GatewayError;
    expect(calls).toBeLessThan(100);
    expect(error.code).toBe("SERIALIZATION_FAILURE");
  });
});
