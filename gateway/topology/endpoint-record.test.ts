/** An endpoint's count of outstanding work: changed only through its own beginWork / endWork, read-only outside topology/. */
import { describe, expect, it } from "vitest";
import type { Endpoint } from "./endpoint.js";
import { EndpointRecord } from "./endpoint-record.js";

describe("an endpoint's outstanding work", () => {
  it("counts work begun and not yet ended", () => {
    const record = new EndpointRecord("c/reader1", "postgres://127.0.0.1/db", false);
    const endpoint: Endpoint = record;
    expect(endpoint.outstanding).toBe(0);
    endpoint.beginWork();
    endpoint.beginWork();
    expect(endpoint.outstanding).toBe(2);
    endpoint.endWork();
    expect(endpoint.outstanding).toBe(1);
    endpoint.endWork();
    expect(record.outstanding).toBe(0);
  });

  it("is read-only on the Endpoint every other folder gets (held by the type checker)", () => {
    const endpoint: Endpoint = new EndpointRecord("c/writer", "postgres://127.0.0.1/db", true);
    // @ts-expect-error -- outside topology/ the count changes only through beginWork / endWork.
    endpoint.outstanding = 5;
  });
});
