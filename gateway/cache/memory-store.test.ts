import { describe, expect, it } from "vitest";
import { ManualClock } from "../clock.js";
import type { Entry } from "./entry.js";
import { MemoryStore } from "./memory-store.js";

const entry = (body: string): Entry => ({ header: { g: ["0"], p: null, at: 0, ttl: 1000, swr: 0 }, body });

describe("memory store", () => {
  it("drops the least recently used entries when its bytes pass the bound", async () => {
    // Each entry counts 2 × (key + body) + 96 + 16 per generation = 2 × (3 + 40) + 112 = 198 bytes: two fit in 400.
    const store = new MemoryStore(400, new ManualClock());
    await store.store("c", "a", entry("x".repeat(40)), 1000);
    await store.store("c", "b", entry("y".repeat(40)), 1000);
    await store.lookup("c", "a", []);
    await store.store("c", "d", entry("z".repeat(40)), 1000);
    expect((await store.lookup("c", "b", [])).entry).toBeUndefined();
    expect((await store.lookup("c", "a", [])).entry?.body).toBe("x".repeat(40));
    expect(store.lookupNow("c", "d", []).entry?.body).toBe("z".repeat(40));
    expect(store.bytes()).toBeLessThanOrEqual(400);
  });

  it("forgets an entry after its TTL", async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(1000, clock);
    await store.store("c", "a", entry("x"), 10);
    clock.advance(11);
    expect((await store.lookup("c", "a", [])).entry).toBeUndefined();
    expect(store.bytes()).toBe(0);
  });

  it("moves a cluster's generations on, and only that cluster's", async () => {
    const store = new MemoryStore(1000, new ManualClock());
    const before = await store.lookup("c", "k", ["*", "t:items"]);
    await store.bump("c", ["*"]);
    expect((await store.lookup("c", "k", ["*", "t:items"])).generations).toEqual(["0", "1", "0"]);
    expect((await store.lookup("other", "k", ["*"])).generations).toEqual(["0", "0"]);
    expect(before.generations).toEqual(["0", "0", "0"]);
  });
});
