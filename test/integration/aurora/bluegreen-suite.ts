/**
 * A Blue/Green switchover on an Aurora stand-in (test/support/bluegreen-switchover.ts), one contract
 * for both engines with their differences in a `BlueGreenDialect`: under a steady load of writes and
 * reads through the gateway, requests that arrive while writes are blocked are held (within their
 * deadlines) and then served by green under blue's names; only requests already in flight when the
 * sessions were dropped may fail; the gateway keeps no session to the old (`-old1`) environment and
 * sends it no write. The switchover's completion event (RDS-EVENT-0260) reaches the gateway as the
 * stack's failover hook delivers it: POST /v1/admin/topology/refresh.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BlueGreenDeployment } from "../../support/bluegreen-switchover.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import type { ServerGroup } from "../../support/server-group.js";
import { runSwitchoverUnderLoad, type SwitchoverLoadResult } from "../../support/switchover-load.js";
import { waitFor } from "../../support/wait-for.js";

/** What the suite needs of an instance: its server's own port, SQL as an administrator. */
interface Instance {
  readonly port: number;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

export interface BlueGreenDialect<I extends Instance, G extends ServerGroup<I>> {
  engine: string;
  /** Starts blue (a writer and one reader) with an empty table `bg_writes`. */
  startBlue(): Promise<G>;
  createDeployment(blue: G): Promise<BlueGreenDeployment<I>>;
  /** bg_writes as an administrator names it. */
  table: string;
  /** A write into bg_writes that returns `server` (the Aurora identifier it ran on) and `port`. */
  write: string;
  /** A read of bg_writes that returns `server` and `port`. */
  read: string;
  /** Sessions of the gateway's login on the instance (counted as an administrator). */
  loginSessions(instance: I): Promise<number>;
  /** Whether the instance refuses the login's writes (its read-only setting). */
  refusesWrites(instance: I): Promise<boolean>;
}

const GATEWAY_SETTINGS = {
  pool: { maxSize: 4, acquireTimeoutMs: 8000 },
  topology: { checkIntervalMs: 100, checkTimeoutMs: 500 },
} as const;

export function blueGreenSuite<I extends Instance, G extends ServerGroup<I>>(dialect: BlueGreenDialect<I, G>): void {
  describe(`a Blue/Green switchover on the Aurora ${dialect.engine} stand-in`, () => {
    let blue: G;
    let deployment: BlueGreenDeployment<I>;
    let gw: TestGateway;
    let result: SwitchoverLoadResult;

    beforeAll(async () => {
      blue = await dialect.startBlue();
      deployment = await dialect.createDeployment(blue);
      gw = await startTestGateway({ clusters: { default: { writerUrl: deployment.url(deployment.cluster), readerUrls: [deployment.url(deployment.name("replica1"))] } }, ...GATEWAY_SETTINGS });
      result = await runSwitchoverUnderLoad(gw, deployment, { write: dialect.write, read: dialect.read, timeoutMs: 15000 });
    }, 180000);

    afterAll(async () => {
      await gw?.stop();
      await deployment?.destroy();
      await blue?.destroy();
    });

    it("fails no request that arrived during the switchover, and serves writes after it on green", () => {
      const [greenWriter] = deployment.green as [I];
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
      const [greenWriter, greenReader] = deployment.green as [I, I];
      const [blueReader] = blue.replicas as [I];
      expect(await deployment.serverIdOf(greenWriter)).toBe("primary");
      expect(await deployment.serverIdOf(greenReader)).toBe("replica1");
      expect(await deployment.serverIdOf(blue.primary)).toBe("primary-old1");
      expect(await deployment.serverIdOf(blueReader)).toBe("replica1-old1");
      expect(await dialect.refusesWrites(blue.primary)).toBe(true);
      const topology = (await gw.get("/v1/admin/topology")).body.clusters.default;
      expect(topology.primary).toBe("default/writer");
      expect(topology.endpoints.map((e: { serverId: string }) => e.serverId).sort()).toEqual(["primary", "replica1"]);
    });

    it("keeps no session to the old environment and sends it no write", async () => {
      for (const instance of blue.all()) expect(await dialect.loginSessions(instance)).toBe(0);
      // Blue's table holds nothing written after the block: no row names an -old1 or green instance.
      const [onBlue] = await blue.primary.query<{ n: number }>(`select count(*) as n from ${dialect.table} where server like '%-old1' or server like '%-green-%'`);
      expect(Number(onBlue?.n)).toBe(0);
      const response = await gw.post("/v1/query", { sql: dialect.write, timeoutMs: 5000 });
      expect(response.status).toBe(200);
      expect(response.body.rows[0].server).toBe("primary");
    });
  });

  /**
   * The cluster name cached past the rename (Aurora's DNS TTL is 5 s): it still leads to blue's writer,
   * now `-old1` and read-only. The gateway must not take it for the writer: writes go to green's writer
   * through its instance name (blue's writer's name) until the cluster name moves.
   */
  describe(`a Blue/Green switchover on the Aurora ${dialect.engine} stand-in whose cluster name moves late`, () => {
    let blue: G;
    let deployment: BlueGreenDeployment<I>;
    let gw: TestGateway;

    beforeAll(async () => {
      blue = await dialect.startBlue();
      deployment = await dialect.createDeployment(blue);
      gw = await startTestGateway({
        clusters: { default: { writerUrl: deployment.url(deployment.cluster), readerUrls: [deployment.url(deployment.name("primary")), deployment.url(deployment.name("replica1"))] } },
        ...GATEWAY_SETTINGS,
      });
    }, 120000);

    afterAll(async () => {
      await gw?.stop();
      await deployment?.destroy();
      await blue?.destroy();
    });

    it("sends no write to the read-only -old1 writer the stale name leads to, and fails none", async () => {
      const [greenWriter] = deployment.green as [I];
      const result = await runSwitchoverUnderLoad(gw, deployment, { write: dialect.write, read: dialect.read, timeoutMs: 15000, switchover: { staleClusterName: true } });
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
      const response = await gw.post("/v1/query", { sql: dialect.write, timeoutMs: 5000 });
      expect(response.body.rows[0]).toEqual({ server: "primary", port: greenWriter.port });
    });
  });
}
