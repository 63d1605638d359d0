/**
 * The topology harnesses themselves (test/support/pg-topology.ts, mariadb-topology.ts), checked once
 * for both engines because the routing, stale-DNS and failover tests lean on them: a primary and two
 * replicas that replicate and are read-only, pause and resume replay, and survive a promotion with
 * the other replica repointed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReplicatedInstance, ServerGroup } from "../../support/server-group.js";
import { waitFor } from "../../support/wait-for.js";

export interface TopologyHarnessTarget {
  name: string;
  /** A primary and two replicas. */
  start(): Promise<ServerGroup<ReplicatedInstance>>;
  /** Creates table `table` with one int column `x`. */
  createTable: string;
  /** Its name for an administrator's session. */
  table: string;
  /** Whether the server refuses writes (in recovery, read_only). */
  readOnly(instance: ReplicatedInstance): Promise<boolean>;
  /** Where the primary has written to and where a replica has applied up to, when the engine compares them by value (GTIDs). */
  positions?: { primary: string; replica: string };
  /** Whether the replica has received (not necessarily applied) everything the primary has written. */
  receivedAll(replica: ReplicatedInstance, primary: ReplicatedInstance): Promise<boolean>;
}

export function defineTopologyHarnessSuite(target: TopologyHarnessTarget): void {
  describe(`${target.name} topology harness`, () => {
    let topology: ServerGroup<ReplicatedInstance>;
    /** Rows in the table; -1 while it cannot be read (not replicated yet, server restarting). */
    const count = async (instance: ReplicatedInstance) =>
      Number((await instance.query<{ n: unknown }>(`select count(*) as n from ${target.table}`).catch(() => [{ n: -1 }]))[0]?.n);

    beforeAll(async () => {
      topology = await target.start();
    }, 120000);

    afterAll(async () => {
      await topology?.destroy();
    });

    it("replicates the primary's writes to both replicas, which are read-only", async () => {
      await topology.primary.query(target.createTable);
      await topology.primary.query(`insert into ${target.table} values (1)`);
      for (const replica of topology.replicas) {
        await waitFor(async () => (await count(replica)) === 1, 10000, `${replica.name} to replay`);
        expect(await target.readOnly(replica)).toBe(true);
        if (target.positions) {
          const [applied] = await replica.query<{ pos: string }>(`select ${target.positions.replica} as pos`);
          const [written] = await topology.primary.query<{ pos: string }>(`select ${target.positions.primary} as pos`);
          expect(applied?.pos).toBe(written?.pos);
        }
      }
      expect(await target.readOnly(topology.primary)).toBe(false);
    });

    it("pauses and resumes replay on a replica", async () => {
      const [paused, live] = topology.replicas as [ReplicatedInstance, ReplicatedInstance];
      await paused.pauseReplay();
      await topology.primary.query(`insert into ${target.table} values (2)`);
      // The live replica has applied the row: the paused one has had it to apply as long.
      await waitFor(async () => (await count(live)) === 2, 10000, "live replica");
      expect(await count(paused)).toBe(1);
      await paused.resumeReplay();
      await waitFor(async () => (await count(paused)) === 2, 10000, "paused replica to catch up");
    });

    it("promotes a replica after the primary dies, applying first what it had received but not replayed, and repoints the other replica to it", async () => {
      const [next, other] = topology.replicas as [ReplicatedInstance, ReplicatedInstance];
      // A replica behind in replay (a loaded machine) has the primary's last write only in its relay
      // log (MariaDB) or received WAL (PostgreSQL): a synchronous standby acknowledged it, so a
      // promotion that threw it away would lose an acknowledged write.
      await next.pauseReplay();
      await topology.primary.query(`insert into ${target.table} values (3)`);
      await waitFor(() => target.receivedAll(next, topology.primary), 10000, `${next.name} to receive the last write`);
      expect(await count(next)).toBe(2);
      await topology.primary.stop("immediate");
      await next.promote();
      expect(await target.readOnly(next)).toBe(false);
      expect(await count(next)).toBe(3);
      await next.query(`insert into ${target.table} values (4)`);
      expect(await count(next)).toBe(4);
      await other.follow(next);
      await waitFor(async () => (await count(other)) === 4, 20000, "repointed replica");
    });
  });
}
