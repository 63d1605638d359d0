/**
 * Aurora-style topology discovery: instances on distinct loopback hosts sharing one port, and a stand-in
 * for aurora_replica_status() that lists them (the writer's session is MASTER_SESSION_ID). The gateway is
 * given only the writer URL and the instance host pattern.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { type PgInstance, type PgTopology, startTopology } from "../../support/pg-topology.js";
import { waitFor } from "../../support/wait-for.js";

let topology: PgTopology;
let gw: TestGateway;

const serverId = (instance: PgInstance) => instance.host.split(".")[3] as string;
const endpointNames = async (): Promise<string[]> =>
  (await gw.get("/v1/admin/topology")).body.clusters.default.endpoints.map((e: { name: string }) => e.name);

beforeAll(async () => {
  topology = await startTopology(2, { distinctHosts: true, synchronousStandby: "replica1" });
  const [primary, replica1, replica2] = topology.all() as [PgInstance, PgInstance, PgInstance];
  await primary.query("create table listed (server_id text primary key, writer boolean not null)");
  await primary.query("insert into listed values ($1, true), ($2, false), ($3, false)", [serverId(primary), serverId(replica1), serverId(replica2)]);
  await primary.query(`create function aurora_replica_status()
    returns table (server_id text, session_id text, replica_lag_in_msec float8) language sql as $$
      select server_id, case when writer then 'MASTER_SESSION_ID' else 'replica-session' end, case when writer then null else 42 end
      from listed $$`);
  await primary.query("create table seen (id serial primary key, at text not null)");
  gw = await startTestGateway({
    clusters: {
      default: {
        writerUrl: primary.url(),
        discovery: { instanceHostPattern: "127.0.0.?", refreshIntervalMs: 200 },
      },
    },
    pool: { maxSize: 2, acquireTimeoutMs: 3000 },
    topology: { checkIntervalMs: 100, checkTimeoutMs: 500 },
  });
}, 120000);

afterAll(async () => {
  await gw?.stop();
  await topology?.destroy();
});

describe("topology discovery from aurora_replica_status()", () => {
  it("finds the replicas from the writer alone and spreads reads over them", async () => {
    const [primary, replica1, replica2] = topology.all() as [PgInstance, PgInstance, PgInstance];
    expect(await endpointNames()).toEqual(expect.arrayContaining([`default/${serverId(replica1)}`, `default/${serverId(replica2)}`]));
    const readers = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const response = await gw.post("/v1/query", { sql: "select host(inet_server_addr()) as host" });
      readers.add(response.body.rows[0].host);
    }
    expect(readers).toEqual(new Set([replica1.host, replica2.host]));
    // The list's own lag figure is kept for each instance (replica_lag_in_msec), the writer's null.
    const endpoints = (await gw.get("/v1/admin/topology")).body.clusters.default.endpoints as { name: string; listedLagMs: number | null }[];
    const lagOf = (name: string) => endpoints.find((e) => e.name === name)?.listedLagMs;
    expect([lagOf(`default/${serverId(replica1)}`), lagOf(`default/${serverId(replica2)}`), lagOf("default/writer")]).toEqual([42, 42, null]);
    const write = await gw.post("/v1/query", { sql: "insert into seen (at) values (host(inet_server_addr())) returning at" });
    expect(write.body.rows[0].at).toBe(primary.host);
  });

  it("follows a failover to a discovered instance and drops instances that leave the list", async () => {
    const [primary, replica1, replica2] = topology.all() as [PgInstance, PgInstance, PgInstance];
    await primary.kill9();
    await replica1.promote();
    await replica1.query("update listed set writer = (server_id = $1)", [serverId(replica1)]);
    await replica2.follow(replica1);
    const write = await gw.post("/v1/query", { sql: "insert into seen (at) values (host(inet_server_addr())) returning at", timeoutMs: 10000 });
    expect(write.status, JSON.stringify(write.body)).toBe(200);
    expect(write.body.rows[0].at).toBe(replica1.host);

    await replica1.query("delete from listed where server_id = $1", [serverId(replica2)]);
    await waitFor(async () => !(await endpointNames()).includes(`default/${serverId(replica2)}`), 5000, "replica2 to be dropped");
  });
});
