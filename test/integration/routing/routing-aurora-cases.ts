/**
 * What the routing suite checks only on the Aurora PostgreSQL stand-in: the gateway reads Aurora's
 * figures when the community functions are refused and tells the refusal; token reads land on readers
 * under real apply lag and never miss their write.
 */
import { describe, expect, it } from "vitest";
import type { AuroraStandin } from "../../support/aurora-standin.js";
import type { RoutingContext } from "./routing-suite.js";

export function auroraPostgresCases(context: () => RoutingContext): void {
  const standin = () => context().topology as unknown as AuroraStandin;
  const topologyOf = async () => (await context().gw.get("/v1/admin/topology")).body.clusters.default;

  describe("Aurora PostgreSQL's figures", () => {
    it("knows each endpoint's instance by Aurora's server id and its position from aurora_replica_status()", async () => {
      const status = await topologyOf();
      expect(status.primary).toBe("default/writer");
      expect(status.endpoints.map((e: { role: string }) => e.role)).toEqual(["primary", "replica", "replica"]);
      for (const endpoint of status.endpoints) expect(endpoint.position).toMatch(/^T\d+$/);
      expect(status.endpoints.map((e: { serverId: string }) => e.serverId)).toEqual(["primary", "replica1", "replica2"]);
      // Whichever instance is inspected first tells the refusal: a reader's replay function (0A000) or the writer's WAL function (55000).
      const refused = status.endpoints[0].positionsRefused;
      expect([
        { sqlstate: "0A000", message: expect.stringContaining("is currently not supported for Aurora") },
        { sqlstate: "55000", message: "WAL control functions cannot be executed when wal_level < logical" },
      ]).toContainEqual(refused);
    });

    it("serves token reads from readers under 20 ms of real apply lag, and none misses its write", async () => {
      const query = (sql: string, extra?: Record<string, unknown>) => context().query(sql, extra);
      await standin().setLag(20);
      try {
        let onReaders = 0;
        let stale = 0;
        const primaryPort = standin().writer().port;
        for (let i = 0; i < 30; i++) {
          const write = await query("insert into hits (port, note) values (inet_server_port(), 'aurora-token') returning id");
          expect(write.status, JSON.stringify(write.body)).toBe(200);
          const read = await query("select count(*)::int as n, inet_server_port() as port from hits where id = $1", {
            params: [write.body.rows[0].id],
            consistencyToken: write.body.consistencyToken,
            timeoutMs: 5000,
          });
          if (read.body.rows[0].n !== 1) stale++;
          if (read.body.rows[0].port !== primaryPort) onReaders++;
        }
        expect(stale).toBe(0);
        // The suite's tokenWaitMs is 50 ms: at 20 ms of lag most reads find a reader in time.
        expect(onReaders).toBeGreaterThan(0);
      } finally {
        await standin().setLag(0);
      }
    });
  });
}
