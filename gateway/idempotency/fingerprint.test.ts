import { describe, expect, it } from "vitest";
import { fingerprint } from "./fingerprint.js";

describe("a request's fingerprint", () => {
  it("is the same whatever order the fields were written in, and leaves out absent ones", () => {
    const a = fingerprint({ surface: "native", statements: [{ sql: "insert", params: [1, { b: 2, a: 1 }] }], isolation: undefined });
    const b = fingerprint({ statements: [{ params: [1, { a: 1, b: 2 }], sql: "insert" }], surface: "native" });
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });

  it("differs with anything that changes what runs or how the answer is shaped", () => {
    const base = { surface: "native", cluster: "default", statements: [{ sql: "insert", params: ["x"] }], shape: { rowMode: "object" } };
    const variants = [
      { ...base, surface: "data-api" },
      { ...base, cluster: "other" },
      { ...base, statements: [{ sql: "insert", params: ["y"] }] },
      { ...base, statements: [{ sql: "insert", params: [["x"]] }] },
      { ...base, shape: { rowMode: "array" } },
    ];
    const prints = new Set([base, ...variants].map((request) => fingerprint(request)));
    expect(prints.size).toBe(variants.length + 1);
  });
});
