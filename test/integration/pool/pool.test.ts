/** The pool against the real local PostgreSQL: fairness, timeouts, lifetimes, idle eviction, keepalive. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresEngine } from "../../../gateway/engines/postgres/engine.js";
import { GatewayError } from "../../../gateway/errors.js";
import { silentLogger } from "../../../gateway/logger.js";
import { type Clock, ManualClock } from "../../../gateway/clock.js";
import { Pool, type PoolSettings } from "../../../gateway/pool/pool.js";
import { unusedPort } from "../../support/ports.js";
import { startForwarder } from "../../support/tcp-forwarder.js";
import { createTestDatabase, gatewaySessions, type TestDatabase } from "../../support/postgres.js";
import { waitFor } from "../../support/wait-for.js";

const DEFAULTS: PoolSettings = {
  maxSize: 2,
  minIdle: 0,
  acquireTimeoutMs: 2000,
  connectTimeoutMs: 2000,
  idleTimeoutMs: 0,
  maxLifetimeMs: 0,
  keepaliveMs: 0,
  validationTimeoutMs: 1000,
  aliveBypassMs: 500,
  housekeepingIntervalMs: 60000,
};

let db: TestDatabase;
const pools: Pool[] = [];

function makePool(settings: Partial<PoolSettings>, clock?: Clock, url = db.url): Pool {
  const engine = new PostgresEngine({ preparedCacheSize: 16, cancelGraceMs: 1000 });
  const pool = new Pool(
    "test",
    { open: (timeoutMs) => engine.connect({ url }, timeoutMs), describeError: (err) => engine.describeConnectError(err) },
    { ...DEFAULTS, ...settings },
    silentLogger,
    clock,
  );
  pools.push(pool);
  pool.start();
  return pool;
}

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  for (const pool of pools) await pool.close(1000);
  await db.drop();
});

describe("pool", () => {
  it("serves waiters in arrival order, and a newcomer does not jump the queue", async () => {
    const pool = makePool({ maxSize: 1 });
    const held = await pool.acquire();
    const order: string[] = [];
    const waiters = Array.from({ length: 20 }, (_, i) =>
      pool.acquire().then((entry) => {
        order.push(`w${i}`);
        pool.release(entry);
      }),
    );
    expect(pool.state().waiting).toBe(20);
    pool.release(held);
    const late = pool.acquire().then((entry) => {
      order.push("late");
      pool.release(entry);
    });
    await Promise.all([...waiters, late]);
    expect(order).toEqual([...Array.from({ length: 20 }, (_, i) => `w${i}`), "late"]);
    expect(pool.stats().acquireWaitMs.count).toBe(22);
  });

  it("times out a waiter with a retryable error that states the pool's condition", async () => {
    const pool = makePool({ maxSize: 1, acquireTimeoutMs: 150 });
    const held = await pool.acquire();
    const error = await pool.acquire().catch((err: unknown) => err);
    expect(error).toBeInstanceOf(GatewayError);
    const gatewayError = error as GatewayError;
    expect(gatewayError.code).toBe("POOL_TIMEOUT");
    expect(gatewayError.retryable).toBe(true);
    expect(gatewayError.message).toMatch(/no connection available after \d+ms \(total=1, active=1, idle=0, waiting=0\)/);
    expect(gatewayError.pool).toEqual({ total: 1, active: 1, idle: 0, waiting: 0 });
    pool.release(held);
  });

  it("says the database is unavailable, with the connect error, when nothing can be opened", async () => {
    const port = await unusedPort();
    const pool = makePool({ acquireTimeoutMs: 300 }, undefined, `postgres://postgres@127.0.0.1:${port}/test`);
    const error = (await pool.acquire().catch((err: unknown) => err)) as GatewayError;
    expect(error.code).toBe("DATABASE_UNAVAILABLE");
    expect(error.message).toContain("cannot connect to the database (ECONNREFUSED)");
    // The address stays out of what callers are told; the operator routes keep the driver's words.
    expect(error.message).not.toContain(String(port));
    expect(pool.databaseState()).toMatchObject({ status: "down", lastError: expect.stringContaining(`127.0.0.1:${port}`) });
  });

  it("retries failed connection attempts until one succeeds", async () => {
    const proxy = await startForwarder(5432, { dropFirst: 3 });
    const pool = makePool({ maxSize: 1, acquireTimeoutMs: 5000 }, undefined, `postgres://postgres@127.0.0.1:${proxy.port}/${db.name}`);
    const entry = await pool.acquire();
    await entry.connection.ping(1000);
    pool.release(entry);
    expect(proxy.accepted).toBeGreaterThanOrEqual(4);
    expect(pool.stats().created).toBe(1);
    await pool.close(1000);
    await proxy.close();
  });

  it("warms minIdle at start and retires connections at their jittered max lifetime", async () => {
    const clock = new ManualClock(1000);
    const pool = makePool({ maxSize: 3, minIdle: 3, maxLifetimeMs: 60000 }, clock);
    expect(await pool.whenWarm(5000)).toBe(true);
    const entries = [...pool.entries];
    for (const entry of entries) {
      expect(entry.expiresAt).toBeGreaterThanOrEqual(1000 + 60000 * 0.975);
      expect(entry.expiresAt).toBeLessThanOrEqual(1000 + 60000);
    }
    const borrowed = await pool.acquire();
    clock.advance(60001);
    await pool.housekeep();
    expect(pool.stats().retired).toBe(2);
    pool.release(borrowed);
    expect(pool.stats().retired).toBe(3);
    await waitFor(() => pool.state().idle === 3, 5000, "refill to minIdle");
    expect(pool.stats().created).toBe(6);
    expect(entries.some((entry) => pool.entries.has(entry))).toBe(false);
  });

  it("closes idle connections above minIdle after the idle timeout, least recently used first", async () => {
    const clock = new ManualClock(0);
    const pool = makePool({ maxSize: 5, minIdle: 2, idleTimeoutMs: 10000 }, clock);
    const borrowed = await Promise.all(Array.from({ length: 5 }, () => pool.acquire()));
    for (const entry of borrowed) pool.release(entry);
    expect(pool.state()).toMatchObject({ total: 5, idle: 5 });
    clock.advance(9000);
    await pool.housekeep();
    expect(pool.state().idle).toBe(5);
    clock.advance(2000);
    await pool.housekeep();
    expect(pool.state()).toMatchObject({ total: 2, idle: 2 });
    expect(pool.stats().retired).toBe(3);
    // The survivors are the most recently released ones.
    expect(pool.idle).toEqual(borrowed.slice(3));
    await waitFor(async () => (await gatewaySessions(db)).length <= 2 + countOtherPools(pool), 5000, "sessions to close");
  });

  it("pings idle connections past the keepalive interval and evicts the ones that fail", async () => {
    const clock = new ManualClock(0);
    const pool = makePool({ maxSize: 2, minIdle: 2, keepaliveMs: 30000 }, clock);
    await pool.whenWarm(5000);
    clock.advance(31000);
    const [first, second] = pool.idle;
    if (!first || !second) throw new Error("pool did not warm");
    first.connection.destroy();
    await pool.housekeep();
    expect(pool.stats().evicted).toBe(1);
    expect(second.lastAccessedAt).toBe(31000);
    expect(second.state).toBe("NOT_IN_USE");
    await waitFor(() => pool.state().idle === 2, 5000, "refill after eviction");
  });

  it("evicts a connection whose backend was terminated, and the next acquire works", async () => {
    const pool = makePool({ maxSize: 1, minIdle: 1 });
    await pool.whenWarm(5000);
    await db.admin.query("select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name = 'poolgate'", [
      db.name,
    ]);
    await waitFor(() => pool.stats().evicted >= 1, 5000, "eviction");
    const next = await pool.acquire();
    await next.connection.ping(1000);
    pool.release(next);
  });

  it("on close rejects waiters, waits for borrowed connections, and leaves no session behind", async () => {
    const pool = makePool({ maxSize: 1 });
    const held = await pool.acquire();
    const waiter = pool.acquire().catch((err: unknown) => err);
    const closing = pool.close(2000);
    expect(((await waiter) as GatewayError).code).toBe("GATEWAY_DRAINING");
    pool.release(held);
    await closing;
    expect(pool.state().total).toBe(0);
    expect(((await pool.acquire().catch((err: unknown) => err)) as GatewayError).code).toBe("GATEWAY_DRAINING");
  });

  it("lets a waiter go at once when its signal aborts, and refuses at once a caller whose signal already has", async () => {
    const pool = makePool({ maxSize: 1, acquireTimeoutMs: 60000 });
    const held = await pool.acquire();
    const lease = new AbortController();
    const waiter = pool.acquire(undefined, { signal: lease.signal }).catch((err: unknown) => err);
    const other = pool.acquire();
    expect(pool.state().waiting).toBe(2);
    lease.abort(new GatewayError("PRIMARY_UNAVAILABLE", "test: no longer the primary"));
    expect(await waiter).toMatchObject({ code: "PRIMARY_UNAVAILABLE", message: "test: no longer the primary" });
    expect(pool.state().waiting).toBe(1);
    expect(await pool.acquire(undefined, { signal: lease.signal }).catch((err: unknown) => err)).toMatchObject({ code: "PRIMARY_UNAVAILABLE" });
    // The queue goes on without it: the next waiter gets the connection.
    pool.release(held);
    pool.release(await other);
  });

  it("gives a waiter up at the caller's deadline when it comes before acquireTimeoutMs", async () => {
    const pool = makePool({ maxSize: 1, acquireTimeoutMs: 60000 });
    const held = await pool.acquire();
    const error = (await pool.acquire(undefined, { deadline: pool.clock.now() + 100 }).catch((err: unknown) => err)) as GatewayError;
    expect(error.code).toBe("POOL_TIMEOUT");
    pool.release(held);
  });

  it("times each waiter out at its own deadline, whatever order they queued in, and serves the ones still waiting", async () => {
    const pool = makePool({ maxSize: 1, acquireTimeoutMs: 60000 });
    const held = await pool.acquire();
    const now = pool.clock.now();
    const settled: string[] = [];
    const wait = (name: string, deadlineIn: number) =>
      pool.acquire(undefined, { deadline: now + deadlineIn }).then(
        (entry) => {
          settled.push(`${name} served`);
          return entry;
        },
        (err: GatewayError) => {
          settled.push(`${name} ${err.code}`);
          return undefined;
        },
      );
    const late = wait("late", 5000);
    const early = wait("early", 150);
    const middle = wait("middle", 400);
    expect(pool.state().waiting).toBe(3);
    await early;
    expect(settled).toEqual(["early POOL_TIMEOUT"]);
    expect(pool.clock.now() - now).toBeGreaterThanOrEqual(145);
    await middle;
    expect(settled).toEqual(["early POOL_TIMEOUT", "middle POOL_TIMEOUT"]);
    expect(pool.clock.now() - now).toBeGreaterThanOrEqual(395);
    expect(pool.state().waiting).toBe(1);
    pool.release(held);
    const entry = await late;
    expect(settled).toEqual(["early POOL_TIMEOUT", "middle POOL_TIMEOUT", "late served"]);
    pool.release(entry as NonNullable<typeof entry>);
  });

  it("lets every waiter carrying an aborted signal go at once, and no other; a new signal is heard as well", async () => {
    const pool = makePool({ maxSize: 1, acquireTimeoutMs: 60000 });
    const held = await pool.acquire();
    const first = new AbortController();
    const leased = [pool.acquire(undefined, { signal: first.signal }), pool.acquire(undefined, { signal: first.signal })].map((p) => p.catch((err: unknown) => err));
    const unleased = pool.acquire();
    expect(pool.state().waiting).toBe(3);
    first.abort(new GatewayError("PRIMARY_UNAVAILABLE", "test: term over"));
    for (const outcome of await Promise.all(leased)) expect(outcome).toMatchObject({ code: "PRIMARY_UNAVAILABLE" });
    expect(pool.state().waiting).toBe(1);
    const second = new AbortController();
    const next = pool.acquire(undefined, { signal: second.signal }).catch((err: unknown) => err);
    second.abort(new GatewayError("PRIMARY_UNAVAILABLE", "test: second term over"));
    expect(await next).toMatchObject({ message: "test: second term over" });
    pool.release(held);
    pool.release(await unleased);
  });

  it("verifies marked sessions before reuse: idle ones at once, a borrowed one when it comes back; rejected ones are retired", async () => {
    const pool = makePool({ maxSize: 3, minIdle: 3 });
    await pool.whenWarm(5000);
    const borrowed = await pool.acquire();
    const [keep, drop] = pool.idle;
    if (!keep || !drop) throw new Error("pool did not warm");
    const verified: number[] = [];
    const verify = async (connection: { id: number; ping(timeoutMs: number): Promise<void> }, timeoutMs: number) => {
      await connection.ping(timeoutMs);
      verified.push(connection.id);
      return connection.id !== drop.connection.id;
    };
    expect(pool.verifyWhere(() => true, verify, "test: role changed")).toBe(3);
    await waitFor(() => verified.length === 2, 5000, "idle sessions verified");
    expect(pool.stats().retired).toBe(1);
    expect(pool.entries.has(keep)).toBe(true);
    expect(pool.entries.has(drop)).toBe(false);
    pool.release(borrowed);
    await waitFor(() => verified.includes(borrowed.connection.id), 5000, "the borrowed session verified on its way back");
    expect(pool.entries.has(borrowed)).toBe(true);
    await waitFor(() => pool.state().idle === 3, 5000, "refill after the retirement");
  });

  describe("acquireNow: a ready session without a promise", () => {
    it("lends an idle session at once, counted as acquire counts it, and gives it back through release", async () => {
      const pool = makePool({ maxSize: 2 });
      pool.release(await pool.acquire());
      const waitsBefore = pool.stats().acquireWaitMs.count;
      const entry = pool.acquireNow();
      expect(entry).toBeDefined();
      expect(entry?.state).toBe("IN_USE");
      expect(pool.state()).toMatchObject({ active: 1, idle: 0, waiting: 0 });
      expect(pool.stats().acquireWaitMs.count).toBe(waitsBefore + 1);
      const answer = await entry?.connection.execute(new PostgresEngine({ preparedCacheSize: 16, cancelGraceMs: 1000 }).statement("select 1 as one"), { timeoutMs: 2000, bigNumbers: "string", maxResultBytes: 1 << 20, maxResultRows: 10 });
      expect(answer?.rows).toEqual([[1]]);
      pool.release(entry as NonNullable<typeof entry>);
      // The statement may have taken a session-level lock: the session is idle again once that is released.
      await waitFor(() => pool.state().idle === 1, 5000, "the session idle again");
      expect(pool.state()).toMatchObject({ active: 0, idle: 1 });
    });

    it("answers nothing when no session is idle, and never opens one itself", async () => {
      const pool = makePool({ maxSize: 2 });
      expect(pool.acquireNow()).toBeUndefined();
      expect(pool.stats()).toMatchObject({ total: 0, pendingCreates: 0 });
    });

    it("does not jump the queue: with a caller waiting, the session goes to the waiter", async () => {
      const pool = makePool({ maxSize: 1 });
      const held = await pool.acquire();
      const waiting = pool.acquire();
      expect(pool.state().waiting).toBe(1);
      expect(pool.acquireNow()).toBeUndefined();
      pool.release(held);
      const served = await waiting;
      expect(served).toBe(held);
      pool.release(served);
    });

    it("leaves a session another principal used, or one idle past aliveBypassMs, to acquire (which resets or checks it first)", async () => {
      const clock = new ManualClock();
      const pool = makePool({ maxSize: 1, aliveBypassMs: 500 }, clock);
      const first = await pool.acquire({ tenant: "alice", share: 1 });
      pool.release(first);
      expect(pool.acquireNow({ tenant: "bob", share: 1 })).toBeUndefined();
      expect(pool.state()).toMatchObject({ idle: 1, active: 0 });
      clock.advance(501);
      expect(pool.acquireNow({ tenant: "alice", share: 1 })).toBeUndefined();
      expect(pool.state()).toMatchObject({ idle: 1, active: 0 });
      const checked = await pool.acquire({ tenant: "alice", share: 1 });
      expect(checked).toBe(first);
      pool.release(checked);
      expect(pool.acquireNow({ tenant: "alice", share: 1 })).toBe(first);
      pool.release(first);
    });

    it("answers nothing under an aborted signal (a primary's lease) or once the pool is closed", async () => {
      const pool = makePool({ maxSize: 1 });
      pool.release(await pool.acquire());
      expect(pool.acquireNow(undefined, AbortSignal.abort(new Error("no longer the primary")))).toBeUndefined();
      expect(pool.state()).toMatchObject({ idle: 1, active: 0 });
      await pool.close(1000);
      expect(pool.acquireNow()).toBeUndefined();
    });
  });
});

/** Sessions held by the other pools of this file that are still open. */
function countOtherPools(except: Pool): number {
  return pools.filter((pool) => pool !== except).reduce((sum, pool) => sum + pool.state().total, 0);
}
