import { describe, expect, it } from "vitest";
import { compareGtidPositions, isGtidPosition, positionIncludes } from "./gtid.js";

const UUID_A = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
const UUID_B = "4d22fa47-71ca-11e1-9e33-c80aa9429562";

describe("MariaDB GTID lists", () => {
  it("compares per domain by sequence number, whichever server wrote it", () => {
    expect(positionIncludes("0-1-42", "0-1-41")).toBe(true);
    expect(positionIncludes("0-1-42", "0-1-42")).toBe(true);
    expect(positionIncludes("0-1-41", "0-1-42")).toBe(false);
    // After a failover the new primary (server 2) continues the same domain.
    expect(positionIncludes("0-2-43", "0-1-42")).toBe(true);
    expect(positionIncludes("0-1-50,1-3-7", "1-3-8")).toBe(false);
    expect(positionIncludes("0-1-50,1-3-7", "1-3-7")).toBe(true);
    expect(positionIncludes("0-1-50", "1-3-1")).toBe(false);
  });

  it("orders by inclusion", () => {
    expect(compareGtidPositions("0-1-5", "0-1-5")).toBe(0);
    expect(compareGtidPositions("0-1-6", "0-1-5")).toBe(1);
    expect(compareGtidPositions("0-1-4", "0-1-5")).toBeLessThan(0);
    expect(compareGtidPositions("0-1-5,1-1-1", "0-1-6")).toBeLessThan(0);
  });
});

describe("MySQL GTID sets", () => {
  it("checks that every transaction of the token is inside the server's set", () => {
    expect(positionIncludes(`${UUID_A}:1-100`, `${UUID_A}:1-57`)).toBe(true);
    expect(positionIncludes(`${UUID_A}:1-50:52-100`, `${UUID_A}:51`)).toBe(false);
    expect(positionIncludes(`${UUID_A}:1-50:51-100`, `${UUID_A}:40-60`)).toBe(true);
    expect(positionIncludes(`${UUID_A}:1-100`, `${UUID_A}:1-5,${UUID_B}:1`)).toBe(false);
    expect(positionIncludes(`${UUID_A}:1-100,\n${UUID_B}:1-3`, `${UUID_B.toUpperCase()}:2`)).toBe(true);
  });

  it("keeps MySQL 8.3 tagged GTIDs apart from untagged ones of the same source", () => {
    expect(isGtidPosition(`${UUID_A}:1-5:batch:1-3`)).toBe(true);
    expect(positionIncludes(`${UUID_A}:1-5:batch:1-3`, `${UUID_A}:batch:2`)).toBe(true);
    expect(positionIncludes(`${UUID_A}:1-5:batch:1-3`, `${UUID_A}:batch:4`)).toBe(false);
    expect(positionIncludes(`${UUID_A}:1-5`, `${UUID_A}:batch:1`)).toBe(false);
  });

  it("never mixes flavours and treats an empty token as seen everywhere", () => {
    expect(positionIncludes(`${UUID_A}:1-100`, "0-1-5")).toBe(false);
    expect(positionIncludes("0-1-5", `${UUID_A}:1`)).toBe(false);
    expect(positionIncludes("", "0-1-5")).toBe(false);
    expect(positionIncludes("0-1-5", "")).toBe(true);
  });
});

describe("token form", () => {
  it("accepts GTID lists and sets only", () => {
    expect(isGtidPosition("0-1-42")).toBe(true);
    expect(isGtidPosition("0-1-42,1-2-3")).toBe(true);
    expect(isGtidPosition(`${UUID_A}:1-5:7`)).toBe(true);
    expect(isGtidPosition("16/B374D848")).toBe(false);
    expect(isGtidPosition("0-1")).toBe(false);
    expect(isGtidPosition("")).toBe(false);
    expect(isGtidPosition("0-1-42; drop table x")).toBe(false);
  });
});
