/**
 * The `aurora` part of `npm run bench` (issue 34's targets), on the Aurora PostgreSQL stand-in
 * (test/support/aurora-standin.ts) with 20 ms of real apply lag and on the Aurora MySQL stand-in
 * (test/support/aurora-mysql-standin.ts) with its own replication lag (MariaDB delays only by whole
 * seconds): callers that write a row and read it back with the write's consistency token. Counts where
 * the token reads ran (tokenReadsOnReplicasPct) and the reads that missed the write their token names
 * (staleReads).
 */
import { Pool } from "undici";
import { startAuroraMysqlStandin } from "../test/support/aurora-mysql-standin.js";
import { startAuroraStandin } from "../test/support/aurora-standin.js";
import { onCleanup, startGateway } from "./processes.js";
import type { AuroraRow } from "./results.js";

type Step = <T>(label: string, estimateS: number, work: () => Promise<T>) => Promise<T>;

const LAG_MS = 20;
const CALLERS = 10;

interface Answer {
  rows?: Record<string, number>[];
  lastInsertId?: string;
  consistencyToken?: string;
  error?: { code: string };
}

async function post(http: Pool, body: unknown): Promise<{ status: number; body: Answer }> {
  const response = await http.request({ method: "POST", path: "/v1/query", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.statusCode, body: (await response.body.json()) as Answer };
}

/** What the token-read loop sends, per engine. */
interface TokenReadSql {
  engine: AuroraRow["engine"];
  lagMs: number;
  insert: string;
  /** The id the write's answer names. */
  idOf(body: Answer): unknown;
  read: string;
}

const POSTGRES_SQL: TokenReadSql = {
  engine: "postgres",
  lagMs: LAG_MS,
  insert: "insert into token_reads (caller) values ($1) returning id",
  idOf: (body) => body.rows?.[0]?.id,
  read: "select count(*)::int as n, inet_server_port() as port from token_reads where id = $1",
};

const MYSQL_SQL: TokenReadSql = {
  engine: "mysql",
  // No lag is set: the stand-in's own replication lag (a few ms), measured by its manager.
  lagMs: 0,
  insert: "insert into token_reads (caller) values (?)",
  idOf: (body) => body.lastInsertId,
  read: "select count(*) as n, @@port as port from token_reads where id = ?",
};

export async function runAurora(durationMs: number, step: Step): Promise<AuroraRow[]> {
  return [await runAuroraPostgres(durationMs, step), await runAuroraMysql(durationMs, step)];
}

async function runAuroraMysql(durationMs: number, step: Step): Promise<AuroraRow> {
  const standin = await step("starting the Aurora MySQL stand-in (a writer, 2 readers)", 15, () => startAuroraMysqlStandin());
  const deregister = onCleanup(() => standin.destroy());
  try {
    await standin.primary.query("create table test.token_reads (id bigint auto_increment primary key, caller int not null) engine=InnoDB");
    const cluster = { writerUrl: standin.primary.url(), readerUrls: standin.replicas.map((r) => r.url()), writerPort: standin.primary.port };
    return await tokenReadsThrough(cluster, MYSQL_SQL, `${CALLERS} callers writing and reading their writes (Aurora MySQL)`, durationMs, step);
  } finally {
    deregister();
    await standin.destroy();
  }
}

async function runAuroraPostgres(durationMs: number, step: Step): Promise<AuroraRow> {
  const standin = await step("starting the Aurora PostgreSQL stand-in (a writer, 2 readers)", 15, () => startAuroraStandin({ lagMs: LAG_MS }));
  const deregister = onCleanup(() => standin.destroy());
  try {
    await standin.primary.query("create table token_reads (id bigserial primary key, caller int not null)");
    const cluster = { writerUrl: standin.primary.url(), readerUrls: standin.replicas.map((r) => r.url()), writerPort: standin.writer().port };
    return await tokenReadsThrough(cluster, POSTGRES_SQL, `${CALLERS} callers writing and reading their writes, ${LAG_MS} ms of lag`, durationMs, step);
  } finally {
    deregister();
    await standin.destroy();
  }
}

/** A gateway in front of a stand-in's writer and readers, and the token-read measurement through it. */
async function tokenReadsThrough(
  cluster: { writerUrl: string; readerUrls: string[]; writerPort: number },
  sql: TokenReadSql,
  label: string,
  durationMs: number,
  step: Step,
): Promise<AuroraRow> {
  const tokenWaitMs = 100;
  const gateway = await startGateway({
    clusters: { default: { writerUrl: cluster.writerUrl, readerUrls: cluster.readerUrls } },
    pool: { maxSize: 10 },
    topology: { checkIntervalMs: 100, checkTimeoutMs: 500 },
    routing: { tokenWaitMs },
  });
  try {
    return await step(label, durationMs / 1000 + 2, () => tokenReads(gateway.url, durationMs, tokenWaitMs, cluster.writerPort, sql));
  } finally {
    await gateway.stop();
  }
}

async function tokenReads(url: string, durationMs: number, tokenWaitMs: number, writerPort: number, sql: TokenReadSql): Promise<AuroraRow> {
  const http = new Pool(url, { connections: CALLERS });
  let reads = 0;
  let onReplicas = 0;
  let stale = 0;
  let errors = 0;
  const end = Date.now() + durationMs;
  await Promise.all(
    Array.from({ length: CALLERS }, async (_, caller) => {
      while (Date.now() < end) {
        const write = await post(http, { sql: sql.insert, params: [caller] });
        const id = sql.idOf(write.body);
        if (write.status !== 200 || id === undefined || write.body.consistencyToken === undefined) {
          errors++;
          continue;
        }
        const read = await post(http, {
          sql: sql.read,
          params: [id],
          bigNumbers: "number",
          consistencyToken: write.body.consistencyToken,
        });
        const row = read.body.rows?.[0];
        if (read.status !== 200 || row === undefined) {
          errors++;
          continue;
        }
        reads++;
        if (row.n !== 1) stale++;
        if (row.port !== writerPort) onReplicas++;
      }
    }),
  );
  await http.close();
  return {
    engine: sql.engine,
    lagMs: sql.lagMs,
    tokenWaitMs,
    tokenReads: reads,
    tokenReadsOnReplicasPct: reads === 0 ? 0 : Math.round((1000 * onReplicas) / reads) / 10,
    staleReads: stale,
    errors,
  };
}
