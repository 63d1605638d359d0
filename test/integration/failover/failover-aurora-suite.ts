/**
 * Failover the Aurora way (issue 34 §3, "a name is not an instance"), written once for both Aurora
 * stand-ins: the writer dies with reads and writes in flight, a reader is promoted, the old writer comes
 * back as a reader, and the cluster and reader names move only seconds later. The gateway is given the
 * names as Aurora users have them (the cluster endpoint as the writer URL, the reader endpoint among the
 * reader URLs) and the instance endpoints. Writes come back on the promoted instance while the cluster
 * name still leads to the old writer, no acknowledged write is lost, no read fails (a plain read lost on
 * the dying writer is run again), and once the names have moved the gateway knows which instance each
 * name leads to by the server id the instance gives itself, and plain reads run on readers. A second
 * failover then runs the routing, idempotency and streams cases through it (failover-aurora-cases.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuroraFailoverCluster, type AuroraNames, startAuroraNames } from "../../support/aurora-failover.js";
import {
  type AuroraFailoverLoadRun,
  type AuroraLoadDialect,
  type AuroraLoadInstance,
  auroraFailoverFigures,
  prepareAuroraFailoverLoad,
  runAuroraFailoverLoad,
} from "../../support/aurora-failover-load.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { waitFor } from "../../support/wait-for.js";
import { auroraSuitesThroughFailover, type SuitesThroughFailoverDialect } from "./failover-aurora-cases.js";

/** What differs between the engines' stand-ins. */
export interface AuroraFailoverEngine<I extends AuroraLoadInstance> {
  /** "the Aurora PostgreSQL stand-in". */
  standinName: string;
  /** Starts the stand-in with two readers, the first acknowledging every commit (nothing acknowledged is lost when it is promoted). */
  start(): Promise<AuroraFailoverCluster<I> & { destroy(): Promise<void> }>;
  load: AuroraLoadDialect;
  /** Tells the load's rows of one engine's run from the other's. */
  runId: string;
  /** A read answering one row whose `on_reader` column says whether the session is on a reader. */
  onReaderSql: string;
  onReader(value: unknown): boolean;
  suites: SuitesThroughFailoverDialect;
}

interface EndpointView {
  name: string;
  role: string;
  serverId: string | null;
}

export function auroraFailoverSuite<I extends AuroraLoadInstance>(engine: AuroraFailoverEngine<I>): void {
  describe(`an Aurora-style failover on ${engine.standinName}`, () => {
    let standin: AuroraFailoverCluster<I> & { destroy(): Promise<void> };
    let names: AuroraNames;
    let gw: TestGateway;
    let run: AuroraFailoverLoadRun;

    beforeAll(async () => {
      standin = await engine.start();
      names = await startAuroraNames(standin);
      await prepareAuroraFailoverLoad(standin, engine.load);
      gw = await startTestGateway({
        clusters: { default: { writerUrl: names.clusterUrl(), readerUrls: [names.readerUrl(), ...standin.all().map((instance) => instance.url())] } },
        pool: { maxSize: 4, acquireTimeoutMs: 5000 },
        topology: { checkIntervalMs: 100, checkTimeoutMs: 500, reresolveIntervalMs: 500 },
      });
      run = await runAuroraFailoverLoad((body) => gw.post("/v1/query", body), standin, names, engine.load, {
        writers: 3,
        readers: 3,
        freshReaders: 3,
        runId: engine.runId,
        oldWriterBackAfterMs: 1500,
        namesMoveAfterMs: 5000,
        afterNamesMovedMs: 4000,
      });
    }, 180000);

    afterAll(async () => {
      await gw?.stop();
      await names?.close();
      await standin?.destroy();
    });

    it("acknowledges writes on the promoted reader while the cluster name still leads to the old writer, and loses none", () => {
      const { promotedAt, namesMovedAt } = run.timeline;
      const backBeforeNamesMoved = run.writes.filter((w) => w.code === undefined && w.answeredAt >= promotedAt && w.sentAt < namesMovedAt);
      expect(backBeforeNamesMoved.length).toBeGreaterThan(0);
      expect(run.lost).toEqual([]);
      // A write in flight when the writer died may have an unknown outcome; nothing else fails.
      expect(run.writes.filter((w) => w.code !== undefined && w.code !== "OUTCOME_UNKNOWN")).toEqual([]);
    });

    it("fails no read: reads lost on the dying writer are run again", () => {
      expect(run.reads.filter((r) => r.fresh).length).toBeGreaterThan(0);
      expect(run.reads.filter((r) => r.failure !== undefined)).toEqual([]);
      expect(auroraFailoverFigures(run).failedReads).toBe(0);
    });

    it("knows each name's instance by its server id once the names have moved", async () => {
      const { newWriter } = run.timeline;
      await waitFor(
        async () => {
          const view = (await gw.get("/v1/admin/topology")).body.clusters.default as { primary: string; endpoints: EndpointView[] };
          const byName = new Map(view.endpoints.map((e) => [e.name, e]));
          return view.primary === "default/writer" && byName.get("default/writer")?.serverId === newWriter.serverId && byName.get("default/reader1")?.role === "replica";
        },
        10000,
        "the cluster name's endpoint to be the primary at the promoted instance, the reader name's a reader",
      );
      // The reader name never serves as the writer again, whichever reader it leads to.
      const view = (await gw.get("/v1/admin/topology")).body.clusters.default as { endpoints: EndpointView[] };
      expect(view.endpoints.find((e) => e.name === "default/reader1")?.serverId).not.toBe(newWriter.serverId);
    });

    it("sends plain reads back to readers after the names moved", async () => {
      // (How soon is the bench's figure, readsOnReaderAfterPct: tests assert no timings.)
      const read = async () => {
        const answer = await gw.post("/v1/query", { sql: engine.onReaderSql });
        expect(answer.status).toBe(200);
        return engine.onReader(answer.body.rows[0].on_reader);
      };
      const onReader = await Promise.all(Array.from({ length: 20 }, () => read()));
      expect(onReader.every(Boolean)).toBe(true);
    });

    auroraSuitesThroughFailover(() => ({ standin, names, gw }), engine.suites);
  });
}
