import { describe, expect, it } from "vitest";
import { neonRequestOptions } from "./request-headers.js";

describe("Neon's request headers", () => {
  it("read as the driver sends them for a batch", () => {
    expect(
      neonRequestOptions({
        "neon-array-mode": "true",
        "neon-raw-text-output": "true",
        "neon-batch-isolation-level": "RepeatableRead",
        "neon-batch-read-only": "true",
        "neon-batch-deferrable": "false",
      }),
    ).toEqual({ arrayMode: true, rawTextOutput: true, isolation: "repeatable read", readOnly: true, deferrable: false, consistencyToken: undefined });
  });

  it("default to objects, the gateway's values and the server's transaction defaults", () => {
    expect(neonRequestOptions({})).toEqual({ arrayMode: false, rawTextOutput: false, isolation: undefined, readOnly: undefined, deferrable: undefined, consistencyToken: undefined });
  });

  it("map READ UNCOMMITTED to READ COMMITTED, as PostgreSQL runs it", () => {
    expect(neonRequestOptions({ "neon-batch-isolation-level": "ReadUncommitted" }).isolation).toBe("read committed");
  });

  it("carry Poolgate's consistency token", () => {
    expect(neonRequestOptions({ "x-poolgate-consistency-token": "0/16B3740" }).consistencyToken).toBe("0/16B3740");
  });

  it("refuse values the driver never sends", () => {
    expect(() => neonRequestOptions({ "neon-array-mode": "yes" })).toThrow(/neon-array-mode header must be "true" or "false"/);
    expect(() => neonRequestOptions({ "neon-batch-isolation-level": "Snapshot" })).toThrow(/Neon-Batch-Isolation-Level must be one of/);
  });
});
