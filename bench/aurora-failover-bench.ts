/**
 * The failover rows of `npm run bench`'s `aurora` part (issue 34's failover targets), on the Aurora
 * PostgreSQL and the Aurora MySQL stand-ins: ten writers, ten plain readers and a few slow fresh
 * readers through a gateway given the cluster name, the reader name and the instance endpoints, while
 * the stand-in fails over the Aurora way (test/support/aurora-failover.ts: the writer dies, a reader is
 * promoted, the old writer is back as a reader 1.5 s later, the names move 5 s after the promotion).
 * Reports how soon writes came back, the share of plain reads on readers from 3 s after the names
 * moved, and what failed.
 */
import { Pool } from "undici";
import { type AuroraFailoverCluster, makeDurableOn, startAuroraNames } from "../test/support/aurora-failover.js";
import {
  AURORA_MYSQL_LOAD,
  AURORA_POSTGRES_LOAD,
  type AuroraLoadDialect,
  type AuroraLoadInstance,
  auroraFailoverFigures,
  prepareAuroraFailoverLoad,
  runAuroraFailoverLoad,
} from "../test/support/aurora-failover-load.js";
import { startAuroraMysqlStandin } from "../test/support/aurora-mysql-standin.js";
import { type AuroraInstance, startAuroraStandin } from "../test/support/aurora-standin.js";
import { onCleanup, startGateway } from "./processes.js";
import type { AuroraFailoverRow } from "./results.js";

type Step = <T>(label: string, estimateS: number, work: () => Promise<T>) => Promise<T>;

const WRITERS = 10;
const READERS = 10;
const FRESH_READERS = 4;
const OLD_WRITER_BACK_AFTER_MS = 1500;
const NAMES_MOVE_AFTER_MS = 5000;
const AFTER_NAMES_MOVED_MS = 6000;

/** A stand-in whose writer's commits are durable on the reader a failover promotes. */
interface DurableStandin {
  cluster: AuroraFailoverCluster<AuroraLoadInstance> & { destroy(): Promise<void> };
  dialect: AuroraLoadDialect;
}

const STANDINS: Record<AuroraFailoverRow["engine"], { label: string; start(): Promise<DurableStandin> }> = {
  postgres: {
    label: "Aurora PostgreSQL",
    start: async () => {
      const standin = await startAuroraStandin();
      try {
        await makeDurableOn(standin, standin.replicas[0] as AuroraInstance);
      } catch (err) {
        await standin.destroy();
        throw err;
      }
      return { cluster: standin, dialect: AURORA_POSTGRES_LOAD };
    },
  },
  mysql: {
    label: "Aurora MySQL",
    start: async () => ({ cluster: await startAuroraMysqlStandin({ durable: true }), dialect: AURORA_MYSQL_LOAD }),
  },
};

export async function runAuroraFailover(engine: AuroraFailoverRow["engine"], step: Step): Promise<AuroraFailoverRow> {
  const { label } = STANDINS[engine];
  const { cluster: standin, dialect } = await step(`starting the ${label} stand-in for a failover (a writer, 2 readers)`, 15, () => STANDINS[engine].start());
  const destroy = async () => {
    await standin.destroy();
  };
  let deregister = onCleanup(destroy);
  try {
    const names = await startAuroraNames(standin);
    deregister();
    deregister = onCleanup(async () => {
      await names.close();
      await destroy();
    });
    try {
      await prepareAuroraFailoverLoad(standin, dialect);
      const gateway = await startGateway({
        clusters: { default: { writerUrl: names.clusterUrl(), readerUrls: [names.readerUrl(), ...standin.all().map((instance) => instance.url())] } },
        pool: { maxSize: 10 },
        topology: { checkIntervalMs: 100, checkTimeoutMs: 500, reresolveIntervalMs: 500 },
      });
      const http = new Pool(gateway.url, { connections: WRITERS + READERS + FRESH_READERS });
      try {
        const post = async (body: unknown) => {
          const response = await http.request({ method: "POST", path: "/v1/query", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
          return { status: response.statusCode, body: await response.body.json() };
        };
        const run = await step(`an Aurora-style failover under ${WRITERS} writers and ${READERS} readers (${label})`, (NAMES_MOVE_AFTER_MS + AFTER_NAMES_MOVED_MS) / 1000 + 5, () =>
          runAuroraFailoverLoad(post, standin, names, dialect, {
            writers: WRITERS,
            readers: READERS,
            freshReaders: FRESH_READERS,
            runId: `bench-${Date.now()}`,
            oldWriterBackAfterMs: OLD_WRITER_BACK_AFTER_MS,
            namesMoveAfterMs: NAMES_MOVE_AFTER_MS,
            afterNamesMovedMs: AFTER_NAMES_MOVED_MS,
          }),
        );
        return {
          scenario: "failover",
          engine,
          writers: WRITERS,
          readers: READERS,
          freshReaders: FRESH_READERS,
          oldWriterBackAfterMs: OLD_WRITER_BACK_AFTER_MS,
          namesMoveAfterMs: NAMES_MOVE_AFTER_MS,
          writes: run.writes.length,
          reads: run.reads.length,
          ...auroraFailoverFigures(run),
        };
      } finally {
        await http.close();
        await gateway.stop();
      }
    } finally {
      await names.close();
    }
  } finally {
    deregister();
    await destroy();
  }
}
