import { describe, expect, it } from "vitest";
import { nextRequestId } from "./request-id.js";

describe("request ids", () => {
  it("are shaped as version-4 UUIDs and never repeat within a process", () => {
    const ids = Array.from({ length: 10_000 }, () => nextRequestId());
    for (const id of ids.slice(0, 50)) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
