import { describe, expect, it } from "vitest";
import { appliedThroughAt, replicaLagMs } from "./lag.js";

const numeric = (a: string, b: string) => Number(a) - Number(b);
const history = [
  { at: 1000, position: "10" },
  { at: 1100, position: "20" },
  { at: 1200, position: "30" },
];

describe("replica lag", () => {
  it("is the age of the oldest primary position the replica has not applied", () => {
    expect(replicaLagMs({ position: "30", reportedLagMs: null }, history, numeric, 1300)).toBe(0);
    expect(replicaLagMs({ position: "25", reportedLagMs: null }, history, numeric, 1300)).toBe(100);
    expect(replicaLagMs({ position: "5", reportedLagMs: 0 }, history, numeric, 1300)).toBe(300);
  });

  it("falls back to the replica's own report where there are no positions (Aurora MySQL without GTID)", () => {
    expect(replicaLagMs({ position: null, reportedLagMs: 40 }, history, numeric, 1300)).toBe(40);
    // With positions, a primary not sampled yet (just after a failover) counts as caught up.
    expect(replicaLagMs({ position: "30", reportedLagMs: 15 }, [], numeric, 1300)).toBe(0);
  });

  it("is unknown (infinite) with neither", () => {
    expect(replicaLagMs({ position: null, reportedLagMs: null }, history, numeric, 1300)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe("applied-through time", () => {
  it("is the start of the newest primary check whose position the replica has applied", () => {
    expect(appliedThroughAt({ position: "30", reportedLagMs: null }, history, numeric)).toBe(1200);
    expect(appliedThroughAt({ position: "25", reportedLagMs: null }, history, numeric)).toBe(1100);
    expect(appliedThroughAt({ position: "5", reportedLagMs: null }, history, numeric)).toBeNull();
  });

  it("without positions, is the replica's check start less its own reported delay", () => {
    expect(appliedThroughAt({ position: null, reportedLagMs: 40, checkStartedAt: 1300 }, history, numeric)).toBe(1260);
    expect(appliedThroughAt({ position: null, reportedLagMs: null, checkStartedAt: 1300 }, history, numeric)).toBeNull();
  });
});
