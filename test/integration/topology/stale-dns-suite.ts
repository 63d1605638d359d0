/**
 * The stale-DNS trap (field report 1), written once and run on each engine: after a failover the
 * cluster's DNS name keeps resolving to an instance that is now read-only. The gateway must notice
 * from role checks (and from the read-only refusals) and send writes to the promoted instance instead
 * of serving read-only errors. The cluster name is a TCP forwarder the test repoints.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import type { ReplicatedInstance, ServerGroup } from "../../support/server-group.js";
import { startForwarder, type TcpForwarder } from "../../support/tcp-forwarder.js";
import { waitFor } from "../../support/wait-for.js";

export interface StaleDnsTarget {
  name: string;
  /** A primary and two replicas; commits wait for replica1, so promoting it loses none. */
  start(): Promise<ServerGroup<ReplicatedInstance>>;
  /** Creates `writes (id, port)`, run on the primary as an administrator. */
  createWrites: string;
  /** The port of the server a statement runs on, as an expression. */
  port: string;
}

/** The instance's URL with the forwarder's port: the cluster name. */
function viaForwarder(instance: ReplicatedInstance, forwarder: TcpForwarder): string {
  const url = new URL(instance.url());
  url.port = String(forwarder.port);
  return url.toString();
}

export function defineStaleDnsSuite(target: StaleDnsTarget): void {
  describe(`stale cluster DNS after a failover on ${target.name}`, () => {
    let topology: ServerGroup<ReplicatedInstance>;
    let clusterDns: TcpForwarder;
    let gw: TestGateway;

    beforeAll(async () => {
      topology = await target.start();
      const [primary, replica1, replica2] = topology.all() as [ReplicatedInstance, ReplicatedInstance, ReplicatedInstance];
      await primary.query(target.createWrites);
      clusterDns = await startForwarder(primary.port);
      gw = await startTestGateway({
        clusters: { default: { writerUrl: viaForwarder(primary, clusterDns), readerUrls: [replica1.url(), replica2.url()] } },
        pool: { maxSize: 2, acquireTimeoutMs: 3000 },
        topology: { checkIntervalMs: 100, checkTimeoutMs: 500 },
      });
    }, 120000);

    afterAll(async () => {
      await gw?.stop();
      await clusterDns?.close();
      await topology?.destroy();
    });

    it("sends writes to the promoted instance while the cluster name still reaches a read-only one", async () => {
      const [primary, replica1, replica2] = topology.all() as [ReplicatedInstance, ReplicatedInstance, ReplicatedInstance];
      // INSERT ... RETURNING (PostgreSQL, MariaDB) says where each write ran.
      const write = async () => {
        const response = await gw.post("/v1/query", { sql: `insert into writes (port) values (${target.port}) returning port`, timeoutMs: 10000 });
        return response.status === 200 ? { port: Number(response.body.rows[0].port) } : { error: response.body.error.code as string };
      };
      expect(await write()).toEqual({ port: primary.port });

      // The old primary dies; its name now (wrongly) resolves to a replica; replica1 is promoted.
      await primary.stop("immediate");
      clusterDns.repoint(replica2.port);
      await replica1.promote();
      await replica2.follow(replica1);

      const results = await Promise.all(Array.from({ length: 20 }, () => write()));
      expect(results.filter((r) => "error" in r)).toEqual([]);
      expect(new Set(results.map((r) => r.port))).toEqual(new Set([replica1.port]));

      const status = (await gw.get("/v1/admin/topology")).body.clusters.default;
      expect(status.primary).toBe("default/reader1");
      expect(status.endpoints.find((e: { name: string }) => e.name === "default/writer").role).toBe("replica");

      // When the name finally resolves to the new primary, the writer endpoint is preferred again.
      clusterDns.repoint(replica1.port);
      await waitFor(async () => (await gw.get("/v1/admin/topology")).body.clusters.default.primary === "default/writer", 5000, "writer endpoint to be primary");
      expect(await write()).toEqual({ port: replica1.port });
    });
  });
}
