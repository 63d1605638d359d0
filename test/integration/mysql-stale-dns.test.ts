/**
 * The stale-DNS trap (field report 1) for the MySQL engine: after a failover the cluster's name keeps
 * resolving to an instance that is now read-only. The gateway must notice from role checks (and from
 * the read-only refusals, error 1290) and send writes to the promoted instance.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { type MariaDbInstance, type MariaDbTopology, startMariaDbTopology } from "../support/mariadb-topology.js";
import { waitFor } from "../support/wait-for.js";
import { startForwarder, type TcpForwarder } from "../support/tcp-forwarder.js";

let topology: MariaDbTopology;
let clusterDns: TcpForwarder;
let gw: TestGateway;

/** The instance URL with the forwarder's port: the cluster name. */
function viaForwarder(instance: MariaDbInstance, forwarder: TcpForwarder): string {
  const url = new URL(instance.url());
  url.port = String(forwarder.port);
  return url.toString();
}

beforeAll(async () => {
  topology = await startMariaDbTopology(2, { semiSyncReplica: "replica1" });
  const [primary, replica1, replica2] = topology.all() as [MariaDbInstance, MariaDbInstance, MariaDbInstance];
  await primary.query("create table test.writes (id int auto_increment primary key, port int not null) engine=InnoDB");
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

describe("stale cluster DNS after a MySQL failover", () => {
  it("sends writes to the promoted instance while the cluster name still reaches a read-only one", async () => {
    const [primary, replica1, replica2] = topology.all() as [MariaDbInstance, MariaDbInstance, MariaDbInstance];
    // MariaDB's INSERT ... RETURNING says where each write ran.
    const write = async () => {
      const response = await gw.post("/v1/query", { sql: "insert into writes (port) values (@@port) returning port", timeoutMs: 10000 });
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
