/**
 * A Blue/Green switchover on the Aurora PostgreSQL stand-in (test/support/aurora-bluegreen.ts), under a
 * steady load of writes and reads through the gateway: requests that arrive while writes are blocked
 * are held (within their deadlines) and then served by green under blue's names; only requests already
 * in flight when the sessions were dropped may fail; the gateway keeps no session to the old (`-old1`)
 * environment and sends it no write. The switchover's completion event (RDS-EVENT-0260) reaches the
 * gateway as the stack's failover hook delivers it: POST /v1/admin/topology/refresh.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BlueGreenDeployment, createBlueGreenDeployment } from "../support/aurora-bluegreen.js";
import { type AuroraInstance, type AuroraStandin, startAuroraStandin } from "../support/aurora-standin.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { runSwitchoverUnderLoad, type SwitchoverLoadResult } from "../support/switchover-load.js";
import { waitFor } from "../support/wait-for.js";

describe("a Blue/Green switchover on the Aurora PostgreSQL stand-in", () => {
  let blue: AuroraStandin;
  let deployment: BlueGreenDeployment;
  let gw: TestGateway;
  let result: SwitchoverLoadResult;

  beforeAll(async () => {
    blue = await startAuroraStandin({ readerCount: 1 });
    await blue.primary.query("create table bg_writes (id serial primary key, server text not null)");
    deployment = await createBlueGreenDeployment(blue);
    gw = await startTestGateway({
      clusters: { default: { writerUrl: deployment.url(deployment.cluster), readerUrls: [deployment.url(deployment.name("replica1"))] } },
      pool: { maxSize: 4, acquireTimeoutMs: 8000 },
      topology: { checkIntervalMs: 100, checkTimeoutMs: 500 },
    });
    result = await runSwitchoverUnderLoad(gw, deployment, {
      write: "insert into bg_writes (server) values (aurora_db_instance_identifier()) returning server, inet_server_port() as port",
      read: "select aurora_db_instance_identifier() as server, inet_server_port() as port from bg_writes limit 1",
      timeoutMs: 15000,
    });
  }, 180000);

  afterAll(async () => {
    await gw?.stop();
    await deployment?.destroy();
    await blue?.destroy();
  });

  it("fails no request that arrived during the switchover, and serves writes after it on green", () => {
    const [greenWriter] = deployment.green as [AuroraInstance];
    expect(result.events).toEqual(["RDS-EVENT-0259", "RDS-EVENT-0260"]);
    // Only requests sent before the sessions were dropped may fail (a write cut mid-flight is never retried blindly).
    expect(result.failedAfterBlock).toEqual([]);
    expect(result.writesAfterEnd).toBeGreaterThan(0);
    // Every write that arrived after the block ran on green's writer, under blue's name.
    expect(new Set(result.writesAfterBlock.map((w) => w.port))).toEqual(new Set([greenWriter.port]));
    expect(new Set(result.writesAfterBlock.map((w) => w.server))).toEqual(new Set(["primary"]));
    // Reads kept being served, by green after the switchover.
    expect(result.readsAfterEnd.length).toBeGreaterThan(0);
    expect(result.readsAfterEnd.every((r) => deployment.green.some((g) => g.port === r.port))).toBe(true);
  });

  it("renames green to blue's names and blue to -old1, and blue stays read-only", async () => {
    const [greenWriter, greenReader] = deployment.green as [AuroraInstance, AuroraInstance];
    expect(await deployment.serverIdOf(greenWriter)).toBe("primary");
    expect(await deployment.serverIdOf(greenReader)).toBe("replica1");
    expect(await deployment.serverIdOf(blue.primary)).toBe("primary-old1");
    const [blueReader] = blue.replicas as [AuroraInstance];
    expect(await deployment.serverIdOf(blueReader)).toBe("replica1-old1");
    const [row] = await blue.primary.query<{ ro: string }>("select current_setting('default_transaction_read_only') as ro");
    expect(row?.ro).toBe("on");
    const topology = (await gw.get("/v1/admin/topology")).body.clusters.default;
    expect(topology.primary).toBe("default/writer");
    expect(topology.endpoints.map((e: { serverId: string }) => e.serverId).sort()).toEqual(["primary", "replica1"]);
  });

  it("keeps no session to the old environment and sends it no write", async () => {
    for (const instance of blue.all()) {
      const [row] = await instance.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where usename = 'aurora_app'");
      expect(row?.n).toBe(0);
    }
    // Blue's table holds nothing written after the block: green has every row blue has, and more.
    const [onBlue] = await blue.primary.query<{ n: number }>("select count(*)::int as n from bg_writes where server like '%-old1' or server = 'primary-green-abc123'");
    expect(onBlue?.n).toBe(0);
    const response = await gw.post("/v1/query", { sql: "insert into bg_writes (server) values (aurora_db_instance_identifier()) returning server", timeoutMs: 5000 });
    expect(response.status).toBe(200);
    expect(response.body.rows[0].server).toBe("primary");
  });
});

/**
 * The cluster name cached past the rename (Aurora's DNS TTL is 5 s): it still leads to blue's writer,
 * now `-old1` and read-only though not in recovery. The gateway must not take it for the writer: writes
 * go to green's writer through its instance name (blue's writer's name) until the cluster name moves.
 */
describe("a Blue/Green switchover whose cluster name moves late", () => {
  let blue: AuroraStandin;
  let deployment: BlueGreenDeployment;
  let gw: TestGateway;

  beforeAll(async () => {
    blue = await startAuroraStandin({ readerCount: 1 });
    await blue.primary.query("create table bg_writes (id serial primary key, server text not null)");
    deployment = await createBlueGreenDeployment(blue);
    gw = await startTestGateway({
      clusters: { default: { writerUrl: deployment.url(deployment.cluster), readerUrls: [deployment.url(deployment.name("primary")), deployment.url(deployment.name("replica1"))] } },
      pool: { maxSize: 4, acquireTimeoutMs: 8000 },
      topology: { checkIntervalMs: 100, checkTimeoutMs: 500 },
    });
  }, 120000);

  afterAll(async () => {
    await gw?.stop();
    await deployment?.destroy();
    await blue?.destroy();
  });

  it("sends no write to the read-only -old1 writer the stale name leads to, and fails none", async () => {
    const [greenWriter] = deployment.green as [AuroraInstance];
    const result = await runSwitchoverUnderLoad(gw, deployment, {
      write: "insert into bg_writes (server) values (aurora_db_instance_identifier()) returning server, inet_server_port() as port",
      read: "select aurora_db_instance_identifier() as server, inet_server_port() as port from bg_writes limit 1",
      timeoutMs: 15000,
      switchover: { staleClusterName: true },
    });
    expect(result.failedAfterBlock).toEqual([]);
    expect(new Set(result.writesAfterBlock.map((w) => w.port))).toEqual(new Set([greenWriter.port]));
    const topology = (await gw.get("/v1/admin/topology")).body.clusters.default;
    expect(topology.primary).toBe("default/reader1");
    expect(topology.endpoints.find((e: { name: string }) => e.name === "default/writer").role).toBe("replica");
    // Reads never went to the stale -old1 writer (it has no position: its lag is unknown).
    expect(result.readsAfterEnd.filter((r) => r.port === blue.primary.port)).toEqual([]);

    // The name moves: the cluster endpoint is the writer again.
    deployment.cluster.repoint(greenWriter.port);
    await waitFor(async () => (await gw.get("/v1/admin/topology")).body.clusters.default.primary === "default/writer", 10000, "the cluster endpoint to lead to the writer again");
    const response = await gw.post("/v1/query", { sql: "insert into bg_writes (server) values (aurora_db_instance_identifier()) returning server, inet_server_port() as port", timeoutMs: 5000 });
    expect(response.body.rows[0]).toEqual({ server: "primary", port: greenWriter.port });
  });
});
