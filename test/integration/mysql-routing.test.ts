/**
 * Routing, read-your-writes by GTID, lag bans and failover for the MySQL engine, against a real
 * MariaDB primary with two GTID replicas (test/support/mariadb-topology.ts; replica1 acknowledges
 * commits semi-synchronously). Where each statement ran is read back from @@port.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MysqlEngine } from "../../gateway/engines/mysql/engine.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { type MariaDbInstance, type MariaDbTopology, startMariaDbTopology } from "../support/mariadb-topology.js";
import { waitFor } from "../support/wait-for.js";

let topology: MariaDbTopology;
let gw: TestGateway;
let primary: MariaDbInstance;
let replica1: MariaDbInstance;
let replica2: MariaDbInstance;

/** BIGINT values (such as @@port) as JSON numbers. */
const query = (sql: string, extra: Record<string, unknown> = {}) => gw.post("/v1/query", { sql, bigNumbers: "number", ...extra });
const portOf = async (extra: Record<string, unknown> = {}): Promise<number> => {
  const response = await query("select @@port as port", extra);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.rows[0].port as number;
};
const topologyOf = async () => (await gw.get("/v1/admin/topology")).body.clusters.default;
const reader = async (name: string) => (await topologyOf()).endpoints.find((e: { name: string }) => e.name === name);

beforeAll(async () => {
  topology = await startMariaDbTopology(2, { semiSyncReplica: "replica1" });
  [primary, replica1, replica2] = topology.all() as [MariaDbInstance, MariaDbInstance, MariaDbInstance];
  await primary.query("create table test.hits (id bigint auto_increment primary key, port int not null, note varchar(40)) engine=InnoDB");
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

describe("MySQL read/write routing", () => {
  it("reports the instances' roles from read_only and their GTID positions", async () => {
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

  it("spreads reads over both replicas and sends writes only to the primary", async () => {
    const readPorts = new Set<number>();
    for (let i = 0; i < 20; i++) readPorts.add(await portOf());
    expect(readPorts).toEqual(new Set([replica1.port, replica2.port]));

    for (let i = 0; i < 10; i++) {
      const response = await query("insert into hits (port) values (@@port)");
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body.consistencyToken).toMatch(/^0-1-\d+$/);
      expect(response.body.lastInsertId).toMatch(/^\d+$/);
    }
    const written = await primary.query<{ port: number; n: number }>("select port, count(*) as n from test.hits group by port");
    expect(written.map((row) => Number(row.port))).toEqual([primary.port]);
    expect(await portOf({ intent: "write" })).toBe(primary.port);
    expect((await query("select @@port as port from hits for update")).body.rows[0].port).toBe(primary.port);
    expect((await query("select @@port as port from hits lock in share mode")).body.rows[0].port).toBe(primary.port);
    expect((await query("select @@port as port, get_lock('routing', 0) as got")).body.rows[0].port).toBe(primary.port);
  });

  it("runs batches and transactions on the primary unless they are read-only", async () => {
    const batch = await gw.post("/v1/batch", { bigNumbers: "number", statements: [{ sql: "select @@port as port" }] });
    expect(batch.body.results[0].rows[0].port).toBe(primary.port);
    const readOnly = await gw.post("/v1/batch", { bigNumbers: "number", readOnly: true, statements: [{ sql: "select @@port as port" }] });
    expect([replica1.port, replica2.port]).toContain(readOnly.body.results[0].rows[0].port);
    const tx = (await gw.post("/v1/transactions", {})).body.transactionId;
    await query("insert into hits (port, note) values (@@port, 'tx')", { transactionId: tx });
    expect((await query("select @@port as port", { transactionId: tx })).body.rows[0].port).toBe(primary.port);
    expect((await gw.post(`/v1/transactions/${tx}/commit`, undefined)).body.consistencyToken).toMatch(/^0-1-\d+$/);
  });

  it("the Data API surface runs everything on the writer, and reads on replicas only when asked", async () => {
    const dataApi = async (headers: Record<string, string> = {}) => {
      const response = await fetch(`${gw.baseUrl}/Execute`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ resourceArn: "arn:aws:rds:us-east-1:1:cluster:c", secretArn: "arn:aws:secretsmanager:us-east-1:1:secret:s", sql: "select @@port as port" }),
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

  it("a read with a GTID consistency token sees the write even when the replicas lag", async () => {
    await replica1.pauseReplay();
    await replica2.pauseReplay();
    try {
      const write = await query("insert into hits (port, note) values (@@port, 'token')");
      const id = write.body.lastInsertId as string;
      const read = await query("select count(*) as n, @@port as port from hits where id = ?", {
        params: [id],
        consistencyToken: write.body.consistencyToken,
      });
      expect(read.body.rows[0]).toEqual({ n: 1, port: primary.port });
      // Without the token the read goes to a replica, which has not applied it.
      const stale = await query("select count(*) as n from hits where id = ?", { params: [id] });
      expect(stale.body.rows[0].n).toBe(0);
    } finally {
      await replica1.resumeReplay();
      await replica2.resumeReplay();
    }
    const write = await query("insert into hits (port, note) values (@@port, 'token2')");
    await waitFor(async () => {
      const read = await query("select count(*) as n, @@port as port from hits where id = ?", {
        params: [write.body.lastInsertId],
        consistencyToken: write.body.consistencyToken,
      });
      return read.body.rows[0].n === 1 && read.body.rows[0].port !== primary.port;
    }, 5000, "a replica to serve the token");
    const forged = await query("select 1", { consistencyToken: "16/B374D848" });
    expect(forged.body.error.code).toBe("INVALID_REQUEST");
  });

  it("bans a replica whose replay is paused while writes go on, and brings it back when it catches up", async () => {
    await replica1.pauseReplay();
    const writing = (async () => {
      for (let i = 0; i < 40; i++) await query("insert into hits (port) values (@@port)");
    })();
    await waitFor(async () => (await reader("default/reader1")).banned !== null, 10000, "ban");
    await writing;
    const ports = new Set<number>();
    for (let i = 0; i < 10; i++) ports.add(await portOf());
    expect(ports).toEqual(new Set([replica2.port]));
    await replica1.resumeReplay();
    await waitFor(async () => (await reader("default/reader1")).banned === null, 10000, "unban");
    const after = new Set<number>();
    for (let i = 0; i < 10; i++) after.add(await portOf());
    expect(after).toEqual(new Set([replica1.port, replica2.port]));
  });
});

describe("MySQL failover", () => {
  it("a write refused as read-only (a demoted primary, 1290) is not applied and runs again on the promoted replica", async () => {
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
    await new Promise((resolve) => setTimeout(resolve, 200));
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
