/**
 * The routing suite, written once and run on each engine against a real primary with two replicas
 * (test/support/pg-topology.ts, test/support/mariadb-topology.ts): reads spread over the replicas,
 * writes and locking reads on the primary, batches and transactions, the Data API's opt-in, reads with
 * a consistency token while the replicas lag, and lag bans. Where each statement ran is read back from
 * the server's own port. Failover under load is the failover suite's (failover-suite.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import type { ReplicatedInstance, ServerGroup } from "../../support/server-group.js";
import { waitFor } from "../../support/wait-for.js";

/** What differs between the engines' SQL for routing, and nothing else. */
export interface RoutingDialect {
  /** The port of the server a statement runs on, as an expression. */
  port: string;
  /** Creates `hits (id, port, note)`, run on the primary as an administrator. */
  createHits: string;
  /** The table's name for an administrator's session (which may have no default database). */
  hitsTable: string;
  /** The one parameter placeholder the token read uses. */
  p1: string;
  /** Inserts one row with this server's port and `note`; the answer says its id (see insertedId). */
  insertHit(note: string): string;
  insertedId(body: { rows: Record<string, unknown>[]; lastInsertId?: string }): unknown;
  /** The engine's consistency token (a PostgreSQL LSN, a MariaDB GTID position). */
  token: RegExp;
  /** A position in the other engine's form: not a token of this one. */
  foreignToken: string;
  /** Reads that lock or write something, so only the primary may run them; each answers `port`. */
  primaryOnlyReads: string[];
  /** Request fields every request carries (MariaDB's @@port is a BIGINT: as a JSON number). */
  request: Record<string, unknown>;
}

export interface RoutingContext {
  gw: TestGateway;
  topology: ServerGroup<ReplicatedInstance>;
  query(sql: string, extra?: Record<string, unknown>): ReturnType<TestGateway["post"]>;
}

export interface RoutingTarget {
  name: string;
  dialect: RoutingDialect;
  /** A primary and two replicas, `hits` not yet created. */
  start(): Promise<ServerGroup<ReplicatedInstance>>;
  /** Makes every replica apply the primary's changes `lagMs` late (a real apply delay); where the engine can only delay by whole seconds, absent. */
  setApplyLag?(topology: ServerGroup<ReplicatedInstance>, lagMs: number): Promise<void>;
  /** Cases for this engine alone, run after the shared ones on the same topology (they may fail it over). */
  engineCases?(context: () => RoutingContext): void;
}

export function defineRoutingSuite(target: RoutingTarget): void {
  const d = target.dialect;

  describe(`read/write routing on ${target.name}`, () => {
    let topology: ServerGroup<ReplicatedInstance>;
    let gw: TestGateway;
    let primary: ReplicatedInstance;
    let replica1: ReplicatedInstance;
    let replica2: ReplicatedInstance;

    const query = (sql: string, extra: Record<string, unknown> = {}) => gw.post("/v1/query", { sql, ...d.request, ...extra });
    const portOf = async (extra: Record<string, unknown> = {}): Promise<number> => {
      const response = await query(`select ${d.port} as port`, extra);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body.rows[0].port as number;
    };
    const topologyOf = async () => (await gw.get("/v1/admin/topology")).body.clusters.default;
    const reader = async (name: string) => (await topologyOf()).endpoints.find((e: { name: string }) => e.name === name);
    /** One sample of the Prometheus exposition, by metric name and exact label text; 0 when absent. */
    const metric = async (name: string, labels: string): Promise<number> => {
      const text = await (await fetch(`${gw.baseUrl}/metrics`)).text();
      const line = text.split("\n").find((candidate) => candidate.startsWith(`${name}{${labels}}`));
      return line === undefined ? 0 : Number(line.split(" ").at(-1));
    };
    const countById = (id: unknown, extra: Record<string, unknown> = {}) =>
      query(`select count(*) as n, ${d.port} as port from hits where id = ${d.p1}`, { params: [id], bigNumbers: "number", ...extra });

    beforeAll(async () => {
      topology = await target.start();
      [primary, replica1, replica2] = topology.all() as [ReplicatedInstance, ReplicatedInstance, ReplicatedInstance];
      await primary.query(d.createHits);
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

    it("spreads reads over both replicas and sends writes only to the primary", async () => {
      const readPorts = new Set<number>();
      for (let i = 0; i < 20; i++) readPorts.add(await portOf());
      expect(readPorts).toEqual(new Set([replica1.port, replica2.port]));

      for (let i = 0; i < 10; i++) {
        const response = await query(d.insertHit("spread"));
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        expect(response.body.consistencyToken).toMatch(d.token);
        expect(String(d.insertedId(response.body))).toMatch(/^\d+$/);
      }
      const written = await primary.query<{ port: number }>(`select distinct port from ${d.hitsTable} where note = 'spread'`);
      expect(written.map((row) => Number(row.port))).toEqual([primary.port]);
      expect(await portOf({ intent: "write" })).toBe(primary.port);
      for (const sql of d.primaryOnlyReads) expect((await query(sql)).body.rows[0].port, sql).toBe(primary.port);
    });

    it("runs batches and transactions on the primary unless they are read-only", async () => {
      const batch = await gw.post("/v1/batch", { ...d.request, statements: [{ sql: `select ${d.port} as port` }] });
      expect(batch.body.results[0].rows[0].port).toBe(primary.port);
      const readOnly = await gw.post("/v1/batch", { ...d.request, readOnly: true, statements: [{ sql: `select ${d.port} as port` }] });
      expect([replica1.port, replica2.port]).toContain(readOnly.body.results[0].rows[0].port);
      const tx = (await gw.post("/v1/transactions", {})).body.transactionId;
      await query(d.insertHit("tx"), { transactionId: tx });
      expect((await query(`select ${d.port} as port`, { transactionId: tx })).body.rows[0].port).toBe(primary.port);
      expect((await gw.post(`/v1/transactions/${tx}/commit`, undefined)).body.consistencyToken).toMatch(d.token);
    });

    it("the Data API surface runs everything on the writer, and reads on replicas only when asked", async () => {
      const dataApi = async (headers: Record<string, string> = {}) => {
        const response = await fetch(`${gw.baseUrl}/Execute`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify({ resourceArn: "arn:aws:rds:us-east-1:1:cluster:c", secretArn: "arn:aws:secretsmanager:us-east-1:1:secret:s", sql: `select ${d.port} as port` }),
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
      await replica1.pauseReplay();
      await replica2.pauseReplay();
      try {
        const write = await query(d.insertHit("token"));
        const id = d.insertedId(write.body);
        const read = await countById(id, { consistencyToken: write.body.consistencyToken });
        expect(read.body.rows[0]).toEqual({ n: 1, port: primary.port });
        // Without the token the read goes to a replica, which has not applied it.
        const stale = await countById(id);
        expect(stale.body.rows[0].n).toBe(0);
      } finally {
        await replica1.resumeReplay();
        await replica2.resumeReplay();
      }
      // Once the replicas have replayed it, the token is served by a replica again.
      const write = await query(d.insertHit("token2"));
      await waitFor(async () => {
        const read = await countById(d.insertedId(write.body), { consistencyToken: write.body.consistencyToken });
        return read.body.rows[0].n === 1 && read.body.rows[0].port !== primary.port;
      }, 5000, "a replica to serve the token");
      const forged = await query("select 1", { consistencyToken: d.foreignToken });
      expect(forged.body.error.code).toBe("INVALID_REQUEST");
    });

    it("bans a replica whose replay is paused while writes go on, and brings it back when it catches up", async () => {
      await replica1.pauseReplay();
      const writing = (async () => {
        for (let i = 0; i < 40; i++) await query(d.insertHit("lag"));
      })();
      await waitFor(async () => (await reader("default/reader1")).banned !== null, 10000, "ban");
      expect(await metric("poolgate_replica_bans_total", 'cluster="default",endpoint="default/reader1"')).toBeGreaterThanOrEqual(1);
      expect(await metric("poolgate_endpoint_banned", 'cluster="default",endpoint="default/reader1"')).toBe(1);
      expect(await metric("poolgate_replica_lag_seconds", 'cluster="default",endpoint="default/reader1"')).toBeGreaterThan(0.4);
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

    if (target.setApplyLag !== undefined) {
      const setApplyLag = (lagMs: number) => target.setApplyLag?.(topology, lagMs);
      it("never serves a maxStalenessMs read from a replica further behind than the bound (200 ms of real apply lag, bound 100 ms)", async () => {
        await setApplyLag(200);
        try {
          let stale = 0;
          for (let i = 0; i < 20; i++) {
            const write = await query(d.insertHit("staleness"));
            const acknowledgedAt = Date.now();
            // Not a wait for state: the bound is wall-clock age, so the read must be asked more than
            // 100 ms after the acknowledgement; the test checks that age below rather than trusting it.
            await new Promise((resolve) => setTimeout(resolve, 110));
            const read = await countById(d.insertedId(write.body), { maxStalenessMs: 100 });
            // Asked more than 100 ms after the write was acknowledged: a read within the bound sees it.
            if (Date.now() - acknowledgedAt > 100 && read.body.rows[0].n !== 1) stale++;
          }
          expect(stale).toBe(0);
        } finally {
          await setApplyLag(0);
        }
      });
    }

    target.engineCases?.(() => ({ gw, topology, query }));
  });
}
