import { describe, expect, it } from "vitest";
import { RequestIds } from "./request-ids.js";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("request ids", () => {
  it("are version-4 UUIDs, never the same twice, across many batches", () => {
    const ids = new RequestIds();
    const seen = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      const id = ids.take();
      expect(id).toMatch(UUID_V4);
      seen.add(id);
    }
    expect(seen.size).toBe(10_000);
  });

  it("spread their random digits evenly (no digit, position or batch boundary favoured)", () => {
    const ids = new RequestIds();
    const count = 20_000;
    // Per position of the 30 fully random hex digits: each of the 16 digits about count/16 times.
    const positions = [...Array(36).keys()].filter((p) => ![8, 13, 14, 18, 19, 23].includes(p));
    const tally = positions.map(() => new Array<number>(16).fill(0));
    for (let i = 0; i < count; i++) {
      const id = ids.take();
      positions.forEach((p, k) => {
        const row = tally[k] as number[];
        const digit = Number.parseInt(id[p] as string, 16);
        row[digit] = (row[digit] ?? 0) + 1;
      });
    }
    const expected = count / 16;
    for (const digits of tally) {
      // Chi-square with 15 degrees of freedom: above 50 has odds of about 1 in 100,000 for a fair source.
      const chiSquare = digits.reduce((sum, seen) => sum + (seen - expected) ** 2 / expected, 0);
      expect(chiSquare).toBeLessThan(50);
    }
  });
});
