import { describe, expect, it } from "vitest";
import { readBackOptions } from "./read-back.js";

describe("the canary's read-back", () => {
  it("reads with the write's token where the gateway gave one: a reader that has applied it, or the writer", () => {
    expect(readBackOptions("0/16B3748")).toEqual({ path: "token", options: { intent: "read", consistencyToken: "0/16B3748" } });
  });

  it("reads from the writer when the write carried no token, so a lagging reader never fails the check", () => {
    expect(readBackOptions(undefined)).toEqual({ path: "writer", options: { intent: "write", consistencyToken: null } });
  });
});
