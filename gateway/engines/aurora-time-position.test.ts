import { describe, expect, it } from "vitest";
import { AURORA_CLOCK_MARGIN_MS, comparePositionsWithTime, isTimePosition, readerPositionsOf } from "./aurora-time-position.js";

const never = (): number => {
  throw new Error("the engine's own comparison is not asked for time positions");
};

describe("Aurora time positions", () => {
  it("counts a token applied only once the reader is the margin past it", () => {
    const token = 1_764_342_000_000_000;
    const at = (micros: number) => `T${micros}`;
    expect(comparePositionsWithTime(at(token + AURORA_CLOCK_MARGIN_MS * 1000), at(token), never)).toBe(0);
    expect(comparePositionsWithTime(at(token + AURORA_CLOCK_MARGIN_MS * 1000 - 1), at(token), never)).toBeLessThan(0);
    expect(comparePositionsWithTime(at(token), at(token), never)).toBeLessThan(0);
  });

  it("never takes a position of one form for a token of the other", () => {
    expect(comparePositionsWithTime("T1764342000000000", "0-1-5", never)).toBe(-1);
    expect(comparePositionsWithTime("0-1-5", "T1", never)).toBe(-1);
    expect(comparePositionsWithTime("0-1-7", "0-1-5", (a, b) => Number(a.split("-")[2]) - Number(b.split("-")[2]))).toBe(2);
  });

  it("reads the writer's list of readers' applied-through times", () => {
    expect(readerPositionsOf("replica1=1764342000123456,replica2=1764342000100000")).toEqual(
      new Map([
        ["replica1", "T1764342000123456"],
        ["replica2", "T1764342000100000"],
      ]),
    );
    expect(readerPositionsOf(null)).toEqual(new Map());
    expect(isTimePosition("T1764342000123456")).toBe(true);
    expect(isTimePosition("0-1-5")).toBe(false);
  });
});
