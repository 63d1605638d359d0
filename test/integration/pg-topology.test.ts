/**
 * The topology harness itself (used by the routing and failover tests): a primary and two streaming
 * replicas that replicate, pause replay, and survive a promotion with the other replica repointed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PgTopology, startTopology } from "../support/pg-topology.js";
import { waitFor } from "../support/wait-for.js";

let topology: PgTopology;

beforeAll(async () => {
  topology = await startTopology(2);
}, 120000);

afterAll(async () => {
  await topology?.destroy();
});

describe("PostgreSQL topology harness", () => {
  it("streams writes on the primary to both replicas, which are read-only", async () => {
    await topology.primary.query("create table t (x int)");
    await topology.primary.query("insert into t values (1)");
    for (const replica of topology.replicas) {
      await waitFor(async () => (await replica.query<{ n: number }>("select count(*)::int as n from t").catch(() => [{ n: 0 }]))[0]?.n === 1, 10000, `${replica.name} to replay`);
      expect((await replica.query<{ r: boolean }>("select pg_is_in_recovery() as r"))[0]?.r).toBe(true);
    }
    expect((await topology.primary.query<{ r: boolean }>("select pg_is_in_recovery() as r"))[0]?.r).toBe(false);
  });

  it("pauses and resumes replay on a replica", async () => {
    const [paused, live] = topology.replicas as [typeof topology.primary, typeof topology.primary];
    await paused.query("select pg_wal_replay_pause()");
    await topology.primary.query("insert into t values (2)");
    await waitFor(async () => (await live.query<{ n: number }>("select count(*)::int as n from t"))[0]?.n === 2, 10000, "live replica");
    expect((await paused.query<{ n: number }>("select count(*)::int as n from t"))[0]?.n).toBe(1);
    await paused.query("select pg_wal_replay_resume()");
    await waitFor(async () => (await paused.query<{ n: number }>("select count(*)::int as n from t"))[0]?.n === 2, 10000, "paused replica to catch up");
  });

  it("promotes a replica after the primary dies and repoints the other replica to it", async () => {
    const [next, other] = topology.replicas as [typeof topology.primary, typeof topology.primary];
    await topology.primary.stop("immediate");
    await next.promote();
    expect((await next.query<{ r: boolean }>("select pg_is_in_recovery() as r"))[0]?.r).toBe(false);
    await next.query("insert into t values (3)");
    await other.follow(next);
    await waitFor(async () => (await other.query<{ n: number }>("select count(*)::int as n from t").catch(() => [{ n: 0 }]))[0]?.n === 3, 20000, "repointed replica");
  });
});
