/**
 * Maintenance on an Aurora stand-in (issue 35 §3), written once for both engines
 * (maintenance-aurora-postgres.test.ts, maintenance-aurora-mysql.test.ts), under a steady load of
 * writes and reads through the gateway: a reader rebooted, a reader scaled to another instance class,
 * the writer rebooted without failover, a reader removed.
 * None may fail a request that could have run on another instance: reads never fail (another reader
 * or the writer serves them), and writes that arrive while the writer reboots are held within their
 * deadlines and run when it is back (only those in flight when it went down may fail).
 *
 * What Aurora does, and so what the stand-ins do:
 * - Rebooting an instance restarts its database engine: a momentary outage of that instance
 *   (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/USER_RebootCluster.html): on the
 *   stand-in, the server stopped ("fast") and started again on the same port.
 * - Rebooting the writer does not reboot the readers on the engine versions the stand-ins show (Aurora
 *   MySQL 2.10 and higher, Aurora PostgreSQL 15.2/14.7/13.10/12.14 and higher: "read availability",
 *   https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/aurora-mysql-survivable-replicas.html);
 *   older versions reboot every reader with it
 *   (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/aurora-reboot-cluster.html), which is
 *   not a case here. No failover: the writer comes back as the writer.
 * - A class change restarts the instance with the class's memory-derived parameters (each engine says
 *   which, `scale`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { underSteadyLoad } from "../../support/steady-load.js";
import { waitFor } from "../../support/wait-for.js";

/** What the cases ask of a stand-in instance. */
export interface MaintenanceInstance {
  /** The server's own port: what the engine's read answers as `port`. */
  readonly port: number;
  /** The gateway's login. */
  url(): string;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  stop(mode?: "fast" | "immediate"): Promise<void>;
  start(): Promise<void>;
}

export interface MaintenanceStandin<I extends MaintenanceInstance> {
  primary: I;
  replicas: I[];
  destroy(): Promise<void>;
}

/** What differs between the engines' stand-ins. */
export interface MaintenanceEngine<I extends MaintenanceInstance> {
  /** "the Aurora PostgreSQL stand-in". */
  standinName: string;
  /** Starts the stand-in with two readers. */
  start(): Promise<MaintenanceStandin<I>>;
  /** Creates `mt_writes (id, port)` (run on the writer as its administrator). */
  createTable: string;
  /** Inserts a row whose `port` is the server's own port. */
  writeSql: string;
  /** Answers one row whose `port` column is the server's own port. */
  readSql: string;
  /** The distinct `port`s of mt_writes (run on the writer as its administrator). */
  writtenPortsSql: string;
  /** A class change: the instance, stopped, starts again with the other class's settings (each engine cites the page that ties them to the class). */
  scale: {
    /** Starts the (stopped) instance again with the other class's settings. */
    restartScaled(instance: I): Promise<void>;
    /** The setting as the instance answers it now, and what the scaled class gives. */
    setting(instance: I): Promise<string>;
    expected: string;
  };
  /**
   * The engine's own cases, run after the suite's on the same stand-in and gateway (the second reader
   * is gone by then: the last case removed it).
   */
  engineCases?(context: () => { standin: MaintenanceStandin<I>; gw: TestGateway }): void;
}

export function maintenanceAuroraSuite<I extends MaintenanceInstance>(engine: MaintenanceEngine<I>): void {
  describe(`maintenance on ${engine.standinName}`, () => {
    let standin: MaintenanceStandin<I>;
    let gw: TestGateway;

    beforeAll(async () => {
      standin = await engine.start();
      await standin.primary.query(engine.createTable);
      gw = await startTestGateway({
        clusters: { default: { writerUrl: standin.primary.url(), readerUrls: standin.replicas.map((replica) => replica.url()) } },
        pool: { maxSize: 4, acquireTimeoutMs: 8000 },
        topology: { checkIntervalMs: 100, checkTimeoutMs: 500 },
      });
    }, 120000);

    afterAll(async () => {
      await gw?.stop();
      await standin?.destroy();
    });

    /** Runs `during` under load (3 writers, 2 readers) and returns every request's outcome once 10 more writes succeeded after it. */
    const underLoad = (during: () => Promise<void>) => underSteadyLoad(gw, { write: engine.writeSql, read: engine.readSql }, during);

    /**
     * Waits until `instance` answers a read that carries the consistency token of a write made just
     * before: the gateway sends such a read to a reader only once the writer's status says the reader
     * has applied the write (docs/aurora.md), so this needs the stand-in's lag figures to be current
     * again after the maintenance, not only the instance to be up (its figures age while nobody
     * measures it, and a reader whose figures stopped gets no token reads, nor, soon, any reads).
     */
    async function servesFreshReads(instance: I, what: string): Promise<void> {
      await waitFor(
        async () => {
          const write = await gw.post("/v1/query", { sql: engine.writeSql, timeoutMs: 5000 });
          if (write.status !== 200 || typeof write.body.consistencyToken !== "string") return false;
          const read = await gw.post("/v1/query", { sql: engine.readSql, consistencyToken: write.body.consistencyToken, timeoutMs: 5000 });
          return read.status === 200 && Number(read.body.rows[0]?.port) === instance.port;
        },
        20000,
        what,
      );
    }

    it("a reader rebooted: no request fails, and the reader serves reads again once back", async () => {
      const [reader] = standin.replicas as [I];
      const { outcomes, endedAt } = await underLoad(async () => {
        await reader.stop("fast");
        await reader.start();
      });
      expect(outcomes.filter((o) => o.status !== 200)).toEqual([]);
      await servesFreshReads(reader, "the rebooted reader to serve reads that need its lag figures");
      expect(outcomes.some((o) => o.kind === "write" && o.startedAt > endedAt)).toBe(true);
    });

    it("a reader scaled to another class: no request fails, and it serves reads again with its new settings", async () => {
      const [reader] = standin.replicas as [I];
      const { outcomes } = await underLoad(async () => {
        await reader.stop("fast");
        await engine.scale.restartScaled(reader);
      });
      expect(outcomes.filter((o) => o.status !== 200)).toEqual([]);
      expect(await engine.scale.setting(reader)).toBe(engine.scale.expected);
      await servesFreshReads(reader, "the scaled reader to serve reads that need its lag figures");
    });

    it("the writer rebooted without failover: reads never fail, writes that arrive meanwhile are held and run on it", async () => {
      const writer = standin.primary;
      let downAt = Number.POSITIVE_INFINITY;
      const { outcomes } = await underLoad(async () => {
        await writer.stop("fast");
        downAt = performance.now();
        await writer.start();
      });
      expect(outcomes.filter((o) => o.kind === "read" && o.status !== 200)).toEqual([]);
      // Writes sent while it was down waited for it; only those in flight when it went down may fail.
      expect(outcomes.filter((o) => o.kind === "write" && o.startedAt >= downAt && o.status !== 200)).toEqual([]);
      // Every write ran on the writer: each row names the server that inserted it.
      const written = await writer.query<{ port: number | string }>(engine.writtenPortsSql);
      expect(written.map((row) => Number(row.port))).toEqual([writer.port]);
      // The readers follow the rebooted writer again (read availability: they were never restarted), and
      // the writer reports their progress again.
      for (const reader of standin.replicas) await servesFreshReads(reader, "each reader to serve reads that need its lag figures after the writer's reboot");
    });

    it("a reader removed: no request fails, reads go to the instances left", async () => {
      const [, removed] = standin.replicas as [I, I];
      let goneAt = Number.POSITIVE_INFINITY;
      const { outcomes } = await underLoad(async () => {
        await removed.stop("fast");
        goneAt = performance.now();
      });
      expect(outcomes.filter((o) => o.status !== 200)).toEqual([]);
      expect(outcomes.filter((o) => o.kind === "read" && o.startedAt > goneAt && o.port === removed.port)).toEqual([]);
      expect(outcomes.some((o) => o.kind === "read" && o.startedAt > goneAt)).toBe(true);
    });

    engine.engineCases?.(() => ({ standin, gw }));
  });
}
