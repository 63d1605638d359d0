import { describe, expect, it } from "vitest";
import { ManualClock } from "../clock.js";
import { UNHEARD } from "../events.js";
import { silentLogger } from "../logger.js";
import { postgresSqlReader } from "../engines/postgres/sql-reader.js";
import { type CacheKeyParts, SHARED_BY_PRINCIPALS } from "./cache-key.js";
import { MemoryStore } from "./memory-store.js";
import { type ClusterCacheSettings, type CachedRead, ResultCache } from "./result-cache.js";

const reader = postgresSqlReader();
const SETTINGS: ClusterCacheSettings = {
  enabled: true,
  maxTtlMs: 60000,
  maxStaleWhileRevalidateMs: 60000,
  sharePrincipals: false,
  invalidation: "tables",
  maxEntryBytes: 1 << 20,
};

function setUp(settings: Partial<ClusterCacheSettings> = {}) {
  const clock = new ManualClock(1000);
  let primary: string | null = "0/10";
  const positions = { primaryNow: () => primary, compare: (a: string, b: string) => parseInt(a.slice(2), 16) - parseInt(b.slice(2), 16) };
  const cache = new ResultCache("main", new MemoryStore(1 << 20, clock), { ...SETTINGS, ...settings }, positions, clock, UNHEARD, silentLogger);
  let runs = 0;
  const run = () => Promise.resolve(`{"rows":[${++runs}]`);
  const read = (sql: string, extra: Partial<CachedRead> = {}) =>
    cache.read(
      {
        key: { cluster: "main", login: "read-write", principal: "alice", sql, params: [], shape: { rowMode: "object", bigNumbers: "string" } },
        analysis: reader.analyse(sql),
        ttlMs: 1000,
        staleWhileRevalidateMs: 0,
        consistencyToken: undefined,
        ...extra,
      },
      run,
    );
  const write = (sql: string) => cache.afterWrite(Promise.resolve(), [{ analysis: reader.analyse(sql) }], false);
  return { cache, clock, read, write, runs: () => runs, movePrimary: (to: string) => (primary = to) };
}

describe("result cache", () => {
  it("answers a repeated read from its entry until its TTL passes", async () => {
    const { clock, read, runs } = setUp();
    expect((await read("SELECT * FROM items")).outcome).toBe("miss");
    expect(await read("SELECT * FROM items")).toEqual({ body: '{"rows":[1]', outcome: "hit" });
    clock.advance(1001);
    expect((await read("SELECT * FROM items")).outcome).toBe("miss");
    expect(runs()).toBe(2);
  });

  it("never answers from an entry after a write to a table it read", async () => {
    const { read, write } = setUp();
    await read("SELECT * FROM items");
    await write("UPDATE items SET n = n + 1");
    expect((await read("SELECT * FROM items")).outcome).toBe("miss");
    expect((await read("SELECT * FROM items")).outcome).toBe("hit");
  });

  it("keeps entries of other tables across a write when invalidation is per table", async () => {
    const { read, write } = setUp();
    await read("SELECT * FROM items");
    await write("INSERT INTO orders VALUES (1)");
    expect((await read("SELECT * FROM items")).outcome).toBe("hit");
  });

  it("invalidates everything after a write of tables it cannot know (DDL, user functions)", async () => {
    const { read, write } = setUp();
    await read("SELECT * FROM items");
    await write("SELECT my_function_that_writes()");
    expect((await read("SELECT * FROM items")).outcome).toBe("miss");
    await write("DROP TABLE items");
    expect((await read("SELECT * FROM items")).outcome).toBe("miss");
  });

  it("invalidates every entry of the cluster on any write in cluster mode", async () => {
    const { read, write } = setUp({ invalidation: "cluster" });
    await read("SELECT * FROM items");
    await write("INSERT INTO orders VALUES (1)");
    expect((await read("SELECT * FROM items")).outcome).toBe("miss");
  });

  it("reads that only read move no generation", async () => {
    const { read, write } = setUp({ invalidation: "cluster" });
    await read("SELECT * FROM items");
    await write("SELECT count(*) FROM orders");
    expect((await read("SELECT * FROM items")).outcome).toBe("hit");
  });

  it("misses for a consistency token newer than the position the entry was read at", async () => {
    const { read, movePrimary } = setUp();
    await read("SELECT * FROM items");
    expect((await read("SELECT * FROM items", { consistencyToken: "0/10" })).outcome).toBe("hit");
    expect((await read("SELECT * FROM items", { consistencyToken: "0/20" })).outcome).toBe("miss");
    movePrimary("0/30");
    await read("SELECT * FROM items", { consistencyToken: "0/20" });
    expect((await read("SELECT * FROM items", { consistencyToken: "0/20" })).outcome).toBe("hit");
  });

  it("serves a stale entry within its window while one refresh runs", async () => {
    const { clock, read, runs } = setUp();
    await read("SELECT * FROM items", { staleWhileRevalidateMs: 5000 });
    clock.advance(2000);
    const answers = await Promise.all([1, 2, 3].map(() => read("SELECT * FROM items", { staleWhileRevalidateMs: 5000 })));
    expect(answers.map(({ outcome }) => outcome)).toEqual(["stale", "stale", "stale"]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs()).toBe(2);
    expect(await read("SELECT * FROM items", { staleWhileRevalidateMs: 5000 })).toEqual({ body: '{"rows":[2]', outcome: "hit" });
  });

  it("never serves a stale entry that a write invalidated", async () => {
    const { clock, read, write } = setUp();
    await read("SELECT * FROM items", { staleWhileRevalidateMs: 5000 });
    clock.advance(2000);
    await write("DELETE FROM items");
    expect((await read("SELECT * FROM items", { staleWhileRevalidateMs: 5000 })).outcome).toBe("miss");
  });

  it("keeps principals apart unless the cluster lets them share", async () => {
    const { cache } = setUp();
    const analysis = reader.analyse("SELECT * FROM items");
    const runner = (rows: string) => () => Promise.resolve(rows);
    const keyOf = (principal: CacheKeyParts["principal"]): CacheKeyParts => ({
      cluster: "main",
      login: "read-write",
      principal,
      sql: "SELECT * FROM items",
      params: [],
      shape: { rowMode: "object" as const, bigNumbers: "string" as const },
    });
    const request = (principal: CacheKeyParts["principal"]) => ({ key: keyOf(principal), analysis, ttlMs: 1000, staleWhileRevalidateMs: 0, consistencyToken: undefined });
    await cache.read(request("alice"), runner("A"));
    expect(await cache.read(request("bob"), runner("B"))).toEqual({ body: "B", outcome: "miss" });
    await cache.read(request(SHARED_BY_PRINCIPALS), runner("S"));
    expect(await cache.read(request(SHARED_BY_PRINCIPALS), runner("X"))).toEqual({ body: "S", outcome: "hit" });
  });

  it("answers a hit from the memory store in the same turn, and leaves misses and invalidated entries to read", async () => {
    const { cache, read, write } = setUp();
    const request: CachedRead = {
      key: { cluster: "main", login: "read-write", principal: "alice", sql: "SELECT * FROM items", params: [], shape: { rowMode: "object", bigNumbers: "string" } },
      analysis: reader.analyse("SELECT * FROM items"),
      ttlMs: 1000,
      staleWhileRevalidateMs: 0,
      consistencyToken: undefined,
    };
    const unused = () => Promise.reject(new Error("a hit runs nothing"));
    expect(cache.readNow(request, unused)).toBeUndefined();
    await read("SELECT * FROM items");
    expect(cache.readNow(request, unused)).toEqual({ body: '{"rows":[1]', outcome: "hit" });
    await write("UPDATE items SET n = 2");
    expect(cache.readNow(request, unused)).toBeUndefined();
  });

  it("bypasses what is not a plain deterministic read", () => {
    const { cache } = setUp();
    const reason = (sql: string) => cache.bypassReason(reader.analyse(sql), false);
    expect(reason("SELECT * FROM items WHERE id = $1")).toBeUndefined();
    expect(reason("SELECT now()")).toBe("not-deterministic");
    expect(reason("SELECT * FROM items FOR UPDATE")).toBe("not-deterministic");
    expect(reason("SELECT CURRENT_TIMESTAMP")).toBe("not-deterministic");
    expect(reason("SELECT random()")).toBe("not-deterministic");
    expect(reason("INSERT INTO items VALUES (1)")).toBe("not-deterministic");
    expect(reason("SELECT 1; SELECT 2")).toBe("not-deterministic");
    expect(cache.bypassReason(reader.analyse("SELECT 1"), true)).toBe("transaction-or-write");
  });
});
