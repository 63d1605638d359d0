/**
 * The routing suite (routing-suite.ts) for the MySQL engine, on a real MariaDB primary with two GTID
 * replicas (test/support/mariadb-topology.ts; replica1 acknowledges commits semi-synchronously), where
 * each statement ran read back from @@port; then what only MySQL has: roles read from read_only with
 * GTID positions, and a planned switchover whose refused writes (1290) run again on the promoted replica.
 */
import { describe, expect, it } from "vitest";
import { MysqlEngine } from "../../../gateway/engines/mysql/engine.js";
import { type MariaDbInstance, startMariaDbTopology } from "../../support/mariadb-topology.js";
import { waitFor } from "../../support/wait-for.js";
import { type RoutingContext, defineRoutingSuite } from "./routing-suite.js";

defineRoutingSuite({
  name: "a MariaDB primary and two GTID replicas (MySQL engine)",
  dialect: {
    port: "@@port",
    createHits: "create table test.hits (id bigint auto_increment primary key, port int not null, note varchar(40)) engine=InnoDB",
    hitsTable: "test.hits",
    p1: "?",
    insertHit: (note) => `insert into hits (port, note) values (@@port, '${note}')`,
    insertedId: (body) => body.lastInsertId,
    token: /^0-1-\d+$/,
    foreignToken: "16/B374D848",
    primaryOnlyReads: ["select @@port as port from hits for update", "select @@port as port from hits lock in share mode", "select @@port as port, get_lock('routing', 0) as got"],
    // BIGINT values (such as @@port) as JSON numbers.
    request: { bigNumbers: "number" },
  },
  start: () => startMariaDbTopology(2, { semiSyncReplica: "replica1" }),
  engineCases: (context) => mysqlCases(context),
});

function mysqlCases(context: () => RoutingContext): void {
  const instances = () => context().topology.all() as [MariaDbInstance, MariaDbInstance, MariaDbInstance];
  const topologyOf = async () => (await context().gw.get("/v1/admin/topology")).body.clusters.default;

  describe("MySQL roles and positions", () => {
    it("reports the instances' roles from read_only and their GTID positions", async () => {
      const [, replica1] = instances();
      const status = await topologyOf();
      expect(status.primary).toBe("default/writer");
      expect(status.endpoints.map((e: { role: string }) => e.role)).toEqual(["primary", "replica", "replica"]);
      for (const endpoint of status.endpoints) expect(endpoint.position).toMatch(/^\d+-\d+-\d+/);
      // A replica's own account of its delay (Seconds_Behind_Master), the fallback where there are no GTIDs.
      const engine = new MysqlEngine({ preparedCacheSize: 4, cancelGraceMs: 500 });
      const session = await engine.connect({ url: replica1.url(), purpose: "monitor" }, 2000);
      try {
        expect(await session.inspect(2000)).toEqual({ role: "replica", position: expect.stringMatching(/^0-1-\d+$/), replayAgeMs: 0 });
      } finally {
        await session.close();
      }
    });
  });

  describe("MySQL failover", () => {
    it("a write refused as read-only (a demoted primary, 1290) is not applied and runs again on the promoted replica", async () => {
      const [primary, replica1, replica2] = instances();
      const query = (sql: string, extra?: Record<string, unknown>) => context().query(sql, extra);
      const acknowledged: string[] = [];
      const writeErrors: string[] = [];
      let retried = 0;
      let stop = false;
      // Several writers, so that some write reaches the primary between read_only and the monitor's next
      // check (100 ms) even on a loaded machine: that write is refused and must be run again.
      const writer = Promise.all(
        Array.from({ length: 5 }, async () => {
          while (!stop) {
            const response = await query("insert into hits (port, note) values (@@port, 'switchover')", { timeoutMs: 15000 });
            if (response.status === 200) {
              acknowledged.push(String(response.body.lastInsertId));
              if (response.body.attempts > 1) retried++;
            } else writeErrors.push(response.body.error.code as string);
          }
        }),
      );
      await waitFor(() => acknowledged.length >= 20, 10000, "writes before the switchover");
      // A planned switchover: the primary stops taking writes, the semi-sync replica takes over.
      await primary.query("SET GLOBAL read_only = 1");
      await waitFor(async () => {
        const [p] = await primary.query<{ pos: string }>("select @@global.gtid_binlog_pos as pos");
        const [r] = await replica1.query<{ pos: string }>("select @@global.gtid_slave_pos as pos");
        return p?.pos === r?.pos;
      }, 10000, "replica1 to catch up");
      // The gateway has seen the primary turn read-only (its writes are refused and wait) before the promotion.
      await waitFor(async () => (await topologyOf()).primary === null, 10000, "the gateway to see no primary");
      await replica1.promote();
      await replica2.follow(replica1);
      await primary.follow(replica1);
      const count = acknowledged.length;
      await waitFor(() => acknowledged.length >= count + 20, 10000, "writes after the switchover");
      stop = true;
      await writer;

      expect(writeErrors).toEqual([]);
      expect(retried).toBeGreaterThan(0);
      const rows = await replica1.query<{ id: number; port: number }>("select id, port from test.hits where note = 'switchover'");
      expect(rows.length).toBe(acknowledged.length);
      expect(new Set(rows.map((row) => String(row.id)))).toEqual(new Set(acknowledged));
      const status = await topologyOf();
      expect(status.primary).toBe("default/reader1");
      expect(status.endpoints.find((e: { name: string }) => e.name === "default/writer").role).toBe("replica");
    });
  });
}
