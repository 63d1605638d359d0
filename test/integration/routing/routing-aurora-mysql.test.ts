/**
 * The routing suite (routing-suite.ts) on the Aurora MySQL stand-in (test/support/aurora-mysql-standin.ts):
 * a server that greets as MySQL 8.0 without GTID positions, roles from read_only, positions and lag read
 * from information_schema.replica_host_status. Then what only Aurora MySQL has: every endpoint known by
 * its @@aurora_server_id, time-bound tokens, and token reads served by readers, never stale.
 */
import { describe, expect, it } from "vitest";
import { type AuroraMysqlStandin, startAuroraMysqlStandin } from "../../support/aurora-mysql-standin.js";
import { type RoutingContext, defineRoutingSuite } from "./routing-suite.js";

defineRoutingSuite({
  name: "the Aurora MySQL stand-in (a writer and two readers)",
  dialect: {
    port: "@@port",
    createHits: "create table test.hits (id bigint auto_increment primary key, port int not null, note varchar(40)) engine=InnoDB",
    hitsTable: "test.hits",
    p1: "?",
    insertHit: (note) => `insert into hits (port, note) values (@@port, '${note}')`,
    insertedId: (body) => body.lastInsertId,
    // Aurora MySQL's positions are the writer's time (gateway/engines/aurora-time-position.ts).
    token: /^T\d+$/,
    foreignToken: "16/B374D848",
    primaryOnlyReads: ["select @@port as port from hits for update", "select @@port as port from hits lock in share mode", "select @@port as port, get_lock('routing', 0) as got"],
    request: { bigNumbers: "number" },
  },
  start: () => startAuroraMysqlStandin(),
  engineCases: (context) => auroraMysqlCases(context),
});

function auroraMysqlCases(context: () => RoutingContext): void {
  const standin = () => context().topology as unknown as AuroraMysqlStandin;
  const topologyOf = async () => (await context().gw.get("/v1/admin/topology")).body.clusters.default;
  const query = (sql: string, extra?: Record<string, unknown>) => context().query(sql, extra);

  /** Writes and reads its own write back with the token, `count` times; where the reads ran and how many missed. */
  async function readYourWrites(count: number): Promise<{ onReaders: number; stale: number }> {
    let onReaders = 0;
    let stale = 0;
    const writerPort = standin().primary.port;
    for (let i = 0; i < count; i++) {
      const write = await query("insert into hits (port, note) values (@@port, 'aurora-token')");
      expect(write.status, JSON.stringify(write.body)).toBe(200);
      expect(write.body.consistencyToken).toMatch(/^T\d+$/);
      const read = await query("select count(*) as n, @@port as port from hits where id = ?", {
        params: [write.body.lastInsertId],
        consistencyToken: write.body.consistencyToken,
        timeoutMs: 5000,
      });
      expect(read.status, JSON.stringify(read.body)).toBe(200);
      if (read.body.rows[0].n !== 1) stale++;
      if (read.body.rows[0].port !== writerPort) onReaders++;
    }
    return { onReaders, stale };
  }

  describe("Aurora MySQL's figures", () => {
    it("knows each endpoint by @@aurora_server_id, positions in the writer's time, no GTIDs", async () => {
      const status = await topologyOf();
      expect(status.primary).toBe("default/writer");
      expect(status.endpoints.map((e: { role: string }) => e.role)).toEqual(["primary", "replica", "replica"]);
      expect(status.endpoints.map((e: { serverId: string }) => e.serverId)).toEqual(["primary", "replica1", "replica2"]);
      for (const endpoint of status.endpoints) expect(endpoint.position).toMatch(/^T\d+$/);
    });

    it("serves token reads from readers and none misses its write", async () => {
      const { onReaders, stale } = await readYourWrites(30);
      expect(stale).toBe(0);
      // The suite's tokenWaitMs is 50 ms: with the stand-in's few ms of lag most reads find a reader in time.
      expect(onReaders).toBeGreaterThan(0);
    });

    it("sends token reads to the writer, never stale, while the readers' apply is paused", async () => {
      const resume = await standin().pause();
      try {
        const { stale } = await readYourWrites(10);
        expect(stale).toBe(0);
      } finally {
        await resume();
      }
    });
  });
}
