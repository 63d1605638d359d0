import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "./errors.js";

describe("error-code registry", () => {
  const readme = readFileSync(new URL("../docs/error-codes.md", import.meta.url), "utf8");
  const table = new Map(
    [...readme.matchAll(/^\|\s*`([A-Z_]+)`\s*\|\s*(\d{3})\s*\|\s*(yes|no)\s*\|/gm)].map((m) => [
      m[1] as string,
      { status: Number(m[2]), retryable: m[3] === "yes" },
    ]),
  );

  it("lists every code in docs/error-codes.md with its status and retryability", () => {
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      expect(table.get(code), `docs/error-codes.md row for ${code}`).toEqual({ status: spec.status, retryable: spec.retryable });
    }
  });

  it("documents no code that does not exist", () => {
    for (const code of table.keys()) expect(Object.keys(ERROR_CODES)).toContain(code);
  });

  it("uses 500 only for bugs, and 503s are all retryable", () => {
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      if (spec.status === 500) expect(code).toBe("INTERNAL_ERROR");
      if (spec.status === 503) expect(spec.retryable).toBe(true);
    }
  });
});
