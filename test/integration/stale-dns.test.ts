/**
 * The stale-DNS trap (field report 1): after a failover the cluster's DNS name keeps resolving to an
 * instance that is now read-only. The gateway must notice from role checks and send writes to the real
 * primary instead of serving read-only errors.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { type PgInstance, type PgTopology, startTopology } from "../support/pg-topology.js";
import { waitFor } from "../support/wait-for.js";
import { startForwarder, type TcpForwarder } from "../support/tcp-forwarder.js";

let topology: PgTopology;
let clusterDns: TcpForwarder;
let gw: TestGateway;

beforeAll(async () => {
  topology = await startTopology(2, { synchronousStandby: "replica1" });
  const [primary, replica1, replica2] = topology.all() as [PgInstance, PgInstance, PgInstance];
  await primary.query("create table writes (id serial primary key, port int not null)");
  clusterDns = await startForwarder(primary.port);
  gw = await startTestGateway({
    clusters: { default: { writerUrl: clusterDns.url(), readerUrls: [replica1.url(), replica2.url()] } },
    pool: { maxSize: 2, acquireTimeoutMs: 3000 },
    topology: { checkIntervalMs: 100, checkTimeoutMs: 500 },
  });
}, 120000);

afterAll(async () => {
  await gw?.stop();
  await clusterDns?.close();
  await topology?.destroy();
});

describe("stale cluster DNS after a failover", () => {
  it("sends writes to the promoted instance while the cluster name still reaches a read-only one", async () => {
    const [primary, replica1, replica2] = topology.all() as [PgInstance, PgInstance, PgInstance];
    const write = () => gw.post("/v1/query", { sql: "insert into writes (port) values (inet_server_port()) returning port", timeoutMs: 10000 });
    expect((await write()).body.rows[0].port).toBe(primary.port);

    // The old primary dies; its DNS name now (wrongly) resolves to a replica; replica1 is promoted.
    await primary.stop("immediate");
    clusterDns.repoint(replica2.port);
    await replica1.promote();
    await replica2.follow(replica1);

    const results = await Promise.all(Array.from({ length: 20 }, () => write()));
    const errors = results.filter((r) => r.status !== 200).map((r) => r.body.error);
    expect(errors).toEqual([]);
    expect(new Set(results.map((r) => r.body.rows[0].port))).toEqual(new Set([replica1.port]));

    const status = (await gw.get("/v1/admin/topology")).body.clusters.default;
    expect(status.primary).toBe("default/reader1");
    expect(status.endpoints.find((e: { name: string }) => e.name === "default/writer").role).toBe("replica");

    // When the name finally resolves to the new primary, the writer endpoint is preferred again.
    clusterDns.repoint(replica1.port);
    await waitFor(async () => (await gw.get("/v1/admin/topology")).body.clusters.default.primary === "default/writer", 5000, "writer endpoint to be primary");
    expect((await write()).body.rows[0].port).toBe(replica1.port);
  });
});
