import { describe, expect, it } from "vitest";
import { correlationIdOf } from "./correlation-id.js";

describe("the caller's correlation id", () => {
  it.each([
    ["an API Gateway request id", "JmIzLgfqIAMEMhw="],
    ["a Lambda request id", "11111111-2222-3333-4444-555555555555"],
    ["an X-Ray trace id", "Root=1-6740a1b2-3c4d5e6f7a8b9c0d1e2f3a4b"],
  ])("is taken as sent when it is %s", (_kind, id) => {
    expect(correlationIdOf({ headers: { "x-correlation-id": id } })).toBe(id);
  });

  it.each([
    ["absent", undefined],
    ["empty", ""],
    ["longer than 128 characters", "a".repeat(129)],
    ["holding spaces or quotes", 'a "b" c'],
    ["holding a line break", "a\nlevel=error"],
  ])("is left out when %s", (_kind, id) => {
    expect(correlationIdOf({ headers: id === undefined ? {} : { "x-correlation-id": id } })).toBeUndefined();
  });

  it("is left out when the header was sent twice", () => {
    expect(correlationIdOf({ headers: { "x-correlation-id": ["a", "b"] } })).toBeUndefined();
  });
});
