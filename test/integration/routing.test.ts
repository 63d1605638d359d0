/**
 * Routing, read-your-writes and lag bans against a real primary with two streaming replicas
 * (test/support/pg-topology.ts). Where each statement ran is read back from inet_server_port().
 * Failover under load is the failover suite's (failover-suite.ts, on both engines).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { type PgInstance, type PgTopology, startTopology } from "../support/pg-topology.js";
import { waitFor } from "../support/wait-for.js";

let topology: PgTopology;
let gw: TestGateway;
let primary: PgInstance;
let replica1: PgInstance;
let replica2: PgInstance;

const query = (sql: string, extra: Record<string, unknown> = {}) => gw.post("/v1/query", { sql, ...extra });
const portOf = async (extra: Record<string, unknown> = {}): Promise<number> => {
  const response = await query("select inet_server_port() as port", extra);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.rows[0].port as number;
};
const topologyOf = async () => (await gw.get("/v1/admin/topology")).body.clusters.default;
/** One sample of the Prometheus exposition, by metric name and exact label text; 0 when absent. */
const metric = async (name: string, labels: string): Promise<number> => {
  const text = await (await fetch(`${gw.baseUrl}/metrics`)).text();
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${name}{${labels}}`));
  return line === undefined ? 0 : Number(line.split(" ").at(-1));
};

beforeAll(async () => {
  topology = await startTopology(2);
  [primary, replica1, replica2] = topology.all() as [PgInstance, PgInstance, PgInstance];
  await primary.query("create table hits (id serial primary key, port int not null, note text)");
  gw = await startTestGateway({
    clusters: { default: { writerUrl: primary.url(), readerUrls: [replica1.url(), replica2.url()] } },
    pool: { maxSize: 3, acquireTimeoutMs: 3000 },
    topology: { checkIntervalMs: 100, checkTimeoutMs: 500, failoverWaitMs: 10000 },
    routing: { maxReplicaLagMs: 400, tokenWaitMs: 50 },
  });
}, 120000);

afterAll(async () => {
  await gw?.stop();
  await topology?.destroy();
});

describe("read/write routing", () => {
  it("spreads reads over both replicas and sends writes only to the primary", async () => {
    const readPorts = new Set<number>();
    for (let i = 0; i < 20; i++) readPorts.add(await portOf());
    expect(readPorts).toEqual(new Set([replica1.port, replica2.port]));

    const writePorts = new Set<number>();
    for (let i = 0; i < 10; i++) {
      const response = await query("insert into hits (port) values (inet_server_port()) returning port");
      expect(response.body.consistencyToken).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      writePorts.add(response.body.rows[0].port);
    }
    expect(writePorts).toEqual(new Set([primary.port]));
    expect(await portOf({ intent: "write" })).toBe(primary.port);
    expect((await query("select inet_server_port() as port, nextval('hits_id_seq')")).body.rows[0].port).toBe(primary.port);
    expect((await query("select inet_server_port() as port from hits for update limit 1")).body.rows[0].port).toBe(primary.port);
  });

  it("runs batches and transactions on the primary unless they are read-only", async () => {
    const batch = await gw.post("/v1/batch", { statements: [{ sql: "select inet_server_port() as port" }] });
    expect(batch.body.results[0].rows[0].port).toBe(primary.port);
    const readOnly = await gw.post("/v1/batch", { readOnly: true, statements: [{ sql: "select inet_server_port() as port" }] });
    expect([replica1.port, replica2.port]).toContain(readOnly.body.results[0].rows[0].port);
    const tx = (await gw.post("/v1/transactions", {})).body.transactionId;
    expect((await query("select inet_server_port() as port", { transactionId: tx })).body.rows[0].port).toBe(primary.port);
    expect((await gw.post(`/v1/transactions/${tx}/commit`, undefined)).body.consistencyToken).toBeTruthy();
  });

  it("the Data API surface runs everything on the writer, and reads on replicas only when asked", async () => {
    const dataApi = async (headers: Record<string, string> = {}) => {
      const response = await fetch(`${gw.baseUrl}/Execute`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ resourceArn: "arn:aws:rds:us-east-1:1:cluster:c", secretArn: "arn:aws:secretsmanager:us-east-1:1:secret:s", sql: "select inet_server_port() as port" }),
      });
      const body = (await response.json()) as { records: { longValue: number }[][] };
      return body.records[0]?.[0]?.longValue;
    };
    const plain = new Set<number | undefined>();
    const optedIn = new Set<number | undefined>();
    for (let i = 0; i < 10; i++) {
      plain.add(await dataApi());
      optedIn.add(await dataApi({ "x-poolgate-extensions": "read-replicas" }));
    }
    expect(plain).toEqual(new Set([primary.port]));
    expect(optedIn).toEqual(new Set([replica1.port, replica2.port]));
  });

  it("a read with a consistency token sees the write even when the replicas lag", async () => {
    await replica1.query("select pg_wal_replay_pause()");
    await replica2.query("select pg_wal_replay_pause()");
    try {
      const write = await query("insert into hits (port, note) values (inet_server_port(), 'token') returning id");
      const id = write.body.rows[0].id as number;
      const read = await query(`select count(*)::int as n, inet_server_port() as port from hits where id = ${id}`, {
        consistencyToken: write.body.consistencyToken,
      });
      expect(read.body.rows[0].n).toBe(1);
      expect(read.body.rows[0].port).toBe(primary.port);
    } finally {
      await replica1.query("select pg_wal_replay_resume()");
      await replica2.query("select pg_wal_replay_resume()");
    }
    // Once the replicas have replayed it, the token is served by a replica again.
    const write = await query("insert into hits (port, note) values (inet_server_port(), 'token2') returning id");
    await waitFor(async () => {
      const read = await query(`select count(*)::int as n, inet_server_port() as port from hits where id = ${write.body.rows[0].id}`, {
        consistencyToken: write.body.consistencyToken,
      });
      return read.body.rows[0].n === 1 && read.body.rows[0].port !== primary.port;
    }, 5000, "a replica to serve the token");
  });

  it("bans a replica whose replay is paused while writes go on, and brings it back when it catches up", async () => {
    await replica1.query("select pg_wal_replay_pause()");
    const writing = (async () => {
      for (let i = 0; i < 40; i++) await query("insert into hits (port) values (inet_server_port())");
    })();
    await waitFor(async () => (await topologyOf()).endpoints.find((e: { name: string }) => e.name === "default/reader1").banned !== null, 10000, "ban");
    expect(await metric("poolgate_replica_bans_total", 'cluster="default",endpoint="default/reader1"')).toBeGreaterThanOrEqual(1);
    expect(await metric("poolgate_endpoint_banned", 'cluster="default",endpoint="default/reader1"')).toBe(1);
    expect(await metric("poolgate_replica_lag_seconds", 'cluster="default",endpoint="default/reader1"')).toBeGreaterThan(0.4);
    await writing;
    const ports = new Set<number>();
    for (let i = 0; i < 10; i++) ports.add(await portOf());
    expect(ports).toEqual(new Set([replica2.port]));
    await replica1.query("select pg_wal_replay_resume()");
    await waitFor(async () => (await topologyOf()).endpoints.find((e: { name: string }) => e.name === "default/reader1").banned === null, 10000, "unban");
    const after = new Set<number>();
    for (let i = 0; i < 10; i++) after.add(await portOf());
    expect(after).toEqual(new Set([replica1.port, replica2.port]));
  });
});

