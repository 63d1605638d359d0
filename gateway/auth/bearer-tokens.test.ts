import { describe, expect, it } from "vitest";
import { parseTokens } from "./bearer-tokens.js";

const token = (n: number) => `token-${String(n).padStart(2, "0")}-0123456789abcdefghij`;

describe("bearer token documents", () => {
  it("accepts one token or several per principal and keeps only digests", () => {
    const stored = parseTokens(JSON.stringify({ api: token(1), batch: [token(2), token(3)] }), "test");
    expect(stored.map((entry) => entry.principal)).toEqual(["api", "batch", "batch"]);
    expect(JSON.stringify(stored)).not.toContain("token-0");
  });

  it("refuses short tokens, tokens with spaces, duplicates and malformed documents, naming no token", () => {
    const refusals = [
      [JSON.stringify({ api: "short" }), /at least 24 characters/],
      [JSON.stringify({ api: `${token(1)} x` }), /printable ASCII without spaces/],
      [JSON.stringify({ api: token(1), other: token(1) }), /listed twice/],
      ["{not json", /not valid JSON/],
      [JSON.stringify(["a"]), /test/],
    ] as const;
    for (const [text, message] of refusals) {
      let error: Error | undefined;
      try {
        parseTokens(text, "test");
      } catch (err) {
        error = err as Error;
      }
      expect(error?.message).toMatch(message);
      expect(error?.message).not.toContain("0123456789abcdefghij");
    }
  });
});
