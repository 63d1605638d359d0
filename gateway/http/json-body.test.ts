import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.js";
import { MAX_NESTING, nestingDepth, nestsDeeperThan, parseJsonBody } from "./json-body.js";

const nested = (depth: number, open = "[", close = "]") => `${open.repeat(depth)}${close.repeat(depth)}`;

describe("JSON request bodies", () => {
  it("accept nesting up to the limit and refuse one level more, in arrays, objects and both", () => {
    expect(parseJsonBody(nested(MAX_NESTING))).toBeDefined();
    expect(() => parseJsonBody(nested(MAX_NESTING + 1))).toThrow(/nested deeper than 64/);
    const objects = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${"}".repeat(depth - 1)}`;
    expect(parseJsonBody(objects(MAX_NESTING))).toBeDefined();
    expect(() => parseJsonBody(objects(MAX_NESTING + 1))).toThrow(GatewayError);
    const mixed = (depth: number) => `${'[{"a":'.repeat(depth / 2)}1${"}]".repeat(depth / 2)}`;
    expect(parseJsonBody(mixed(MAX_NESTING))).toBeDefined();
    expect(() => parseJsonBody(mixed(MAX_NESTING + 2))).toThrow(/nested deeper/);
  });

  it("count brackets inside strings only toward the quick check, never toward the depth", () => {
    // Many brackets in all (so the full scan runs), none of them nesting beyond one level.
    const inStrings = JSON.stringify({ sql: "[".repeat(500) + "{".repeat(500), params: ["]]]", "\\\"[[["] });
    expect(nestsDeeperThan(inStrings, MAX_NESTING)).toBe(false);
    expect(parseJsonBody(inStrings)).toEqual(JSON.parse(inStrings));
    // Many shallow arrays side by side: more than the limit in all, depth 2.
    const wide = `[${Array.from({ length: 200 }, () => "[1]").join(",")}]`;
    expect(nestingDepth(wide)).toBe(2);
    expect(nestsDeeperThan(wide, MAX_NESTING)).toBe(false);
  });

  it("agrees with the full scan on every text, whatever its count of brackets", () => {
    const pieces = ["[", "]", "{", "}", '"', "\\", "a", ",", ":"];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
    for (let i = 0; i < 2000; i++) {
      const text = Array.from({ length: next() % 200 }, () => pieces[next() % pieces.length]).join("");
      for (const limit of [0, 1, 3, 10, 64]) expect(nestsDeeperThan(text, limit)).toBe(nestingDepth(text) > limit);
    }
  });
});
