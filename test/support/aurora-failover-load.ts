/**
 * An Aurora-style failover under load, as the failover test asserts it and the bench measures it:
 * writers insert rows with unique ids, readers send plain reads (that say whether they ran on a
 * reader) and slow fresh ones (maxStalenessMs 0: on the writer, in flight there when it dies) through
 * the gateway, while the stand-in fails over the Aurora way (aurora-failover.ts). The load goes on
 * until some time after the names moved. Everything is recorded with wall-clock times, to be judged by
 * the caller. The SQL is each engine's (AURORA_POSTGRES_LOAD, AURORA_MYSQL_LOAD); the load is one.
 */
import { type AuroraFailoverCluster, type AuroraFailoverTimeline, type AuroraNamedInstance, type AuroraNames, failOverTheAuroraWay } from "./aurora-failover.js";
import { waitFor } from "./wait-for.js";

/** An instance the load can check as an administrator afterwards. */
export interface AuroraLoadInstance extends AuroraNamedInstance {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

/** The load's SQL in one engine's dialect. */
export interface AuroraLoadDialect {
  createTable: string;
  /** Inserts the id given as its one parameter. */
  insert: string;
  /** A plain read answering `on_reader` (whether the instance is a reader). */
  plainRead: string;
  /** The same, slow (200 ms on the server), so that some are running on the writer when it dies. */
  freshRead: string;
  /** The ids among `ids` that the instance has (as an administrator). */
  present(instance: AuroraLoadInstance, ids: string[]): Promise<Set<string>>;
}

/** The gateway as the load reaches it (in process for tests, a child for the bench). */
export type PostQuery = (body: unknown) => Promise<{ status: number; body: unknown }>;

export interface AuroraFailoverLoadOptions {
  writers: number;
  /** Callers sending plain reads (which go to readers). */
  readers: number;
  /** Callers sending reads with maxStalenessMs 0 (which run on the writer: the reads in flight there when it dies). */
  freshReaders: number;
  /** Names the run in the ids it writes. */
  runId: string;
  oldWriterBackAfterMs: number;
  namesMoveAfterMs: number;
  /** The load goes on this long after the names moved. */
  afterNamesMovedMs: number;
}

export interface LoadWrite {
  id: string;
  sentAt: number;
  answeredAt: number;
  /** Undefined when acknowledged. */
  code: string | undefined;
}

export interface LoadRead {
  /** Sent with maxStalenessMs 0 (on the writer), else a plain read. */
  fresh: boolean;
  sentAt: number;
  answeredAt: number;
  /** Whether the instance that answered was a reader (pg_is_in_recovery()); undefined when it failed. */
  onReader: boolean | undefined;
  /** The error code, when the read failed. */
  failure: string | undefined;
}

export interface AuroraFailoverLoadRun {
  timeline: AuroraFailoverTimeline<AuroraLoadInstance>;
  writes: LoadWrite[];
  reads: LoadRead[];
  /** Acknowledged ids the new writer does not have. */
  lost: string[];
}

/** The table the load writes (created by `prepareAuroraFailoverLoad`). */
const TABLE = "aurora_failover_writes";

export const AURORA_POSTGRES_LOAD: AuroraLoadDialect = {
  createTable: `create table ${TABLE} (id text primary key)`,
  insert: `insert into ${TABLE} (id) values ($1)`,
  plainRead: `select count(*)::int as n, pg_is_in_recovery() as on_reader from ${TABLE}`,
  freshRead: `select count(*)::int as n, pg_is_in_recovery() as on_reader from ${TABLE}, pg_sleep(0.2)`,
  present: async (instance, ids) => new Set((await instance.query<{ id: string }>(`select id from ${TABLE} where id = any($1)`, [ids])).map((row) => row.id)),
};

/**
 * On the Aurora MySQL stand-in a reader is read_only (aurora-mysql-standin.ts); the gateway's login
 * reaches `test`. The variable is read in a SELECT without FROM: beside `FROM <table>` the stand-in's
 * MariaDB answered @@global.read_only 0 on its read-only replicas (every read counted on the writer).
 */
export const AURORA_MYSQL_LOAD: AuroraLoadDialect = {
  createTable: `create table test.${TABLE} (id varchar(100) primary key) engine=InnoDB`,
  insert: `insert into ${TABLE} (id) values (?)`,
  plainRead: `select @@global.read_only as on_reader, (select count(*) from ${TABLE}) as n`,
  freshRead: `select @@global.read_only as on_reader, (select count(*) from ${TABLE}) as n, sleep(0.2) as slept`,
  present: async (instance, ids) =>
    new Set(ids.length === 0 ? [] : (await instance.query<{ id: string }>(`select id from test.${TABLE} where id in (?)`, [ids])).map((row) => row.id)),
};

export async function prepareAuroraFailoverLoad<I extends AuroraLoadInstance>(standin: AuroraFailoverCluster<I>, dialect: AuroraLoadDialect): Promise<void> {
  await standin.writer().query(dialect.createTable);
}

/** PostgreSQL answers a boolean, MySQL's @@read_only an integer (a string when it is a BIGINT). */
function isTrue(value: unknown): boolean {
  return value === true || value === 1 || value === "1";
}

function codeOf(body: unknown): string {
  return (body as { error?: { code?: string } }).error?.code ?? "NO_CODE";
}

export async function runAuroraFailoverLoad<I extends AuroraLoadInstance>(
  post: PostQuery,
  standin: AuroraFailoverCluster<I>,
  names: AuroraNames,
  dialect: AuroraLoadDialect,
  options: AuroraFailoverLoadOptions,
): Promise<AuroraFailoverLoadRun> {
  const writes: LoadWrite[] = [];
  const reads: LoadRead[] = [];
  let stopAt = Number.POSITIVE_INFINITY;
  let sequence = 0;

  const writer = async (caller: number) => {
    while (Date.now() < stopAt) {
      const id = `${options.runId}-${caller}-${sequence++}`;
      const sentAt = Date.now();
      const answer = await post({ sql: dialect.insert, params: [id], timeoutMs: 15000 });
      writes.push({ id, sentAt, answeredAt: Date.now(), code: answer.status === 200 ? undefined : codeOf(answer.body) });
    }
  };
  const reader = async (fresh: boolean) => {
    while (Date.now() < stopAt) {
      const sentAt = Date.now();
      const answer = await post(fresh ? { sql: dialect.freshRead, maxStalenessMs: 0, timeoutMs: 15000 } : { sql: dialect.plainRead, timeoutMs: 15000 });
      const row = (answer.body as { rows?: { on_reader?: unknown }[] }).rows?.[0];
      reads.push({
        fresh,
        sentAt,
        answeredAt: Date.now(),
        onReader: answer.status === 200 ? isTrue(row?.on_reader) : undefined,
        failure: answer.status === 200 ? undefined : codeOf(answer.body),
      });
    }
  };
  const load = Promise.all([
    ...Array.from({ length: options.writers }, (_, i) => writer(i)),
    ...Array.from({ length: options.readers }, () => reader(false)),
    ...Array.from({ length: options.freshReaders }, () => reader(true)),
  ]);
  try {
    await waitFor(() => writes.filter((w) => w.code === undefined).length >= 20 && reads.length >= 20, 30000, "steady load before the failover");
    // The load ends afterNamesMovedMs after the names moved, counted from that moment: the old writer
    // may come back later than that (a restart on a loaded machine), and the load must not stop at once then.
    const timeline = await failOverTheAuroraWay(standin, names, options, (step, at) => {
      if (step === "namesMovedAt") stopAt = at + options.afterNamesMovedMs;
    });
    await load;
    const acknowledged = writes.filter((w) => w.code === undefined).map((w) => w.id);
    const present = await dialect.present(timeline.newWriter, acknowledged);
    return { timeline, writes, reads, lost: acknowledged.filter((id) => !present.has(id)) };
  } finally {
    stopAt = 0;
    await load;
  }
}

/** The figures the bench reports (issue 34's failover targets), from one run. */
export interface AuroraFailoverFigures {
  /** From the promotion to the first write acknowledged after it. */
  writesBackMs: number | null;
  /** Share of plain reads (not the fresh ones) sent from 3 s after the names moved that ran on a reader. */
  readsOnReaderAfterPct: number;
  /** How many plain reads that share is of. */
  plainReadsAfter: number;
  failedReads: number;
  /** Writes that failed (in flight on the writer when it died: their outcome is unknown to the caller). */
  failedWrites: number;
  /** Acknowledged writes the new writer does not have. */
  lostWrites: number;
}

export function auroraFailoverFigures(run: AuroraFailoverLoadRun): AuroraFailoverFigures {
  const { promotedAt, namesMovedAt } = run.timeline;
  const back = run.writes.filter((w) => w.code === undefined && w.answeredAt >= promotedAt).sort((a, b) => a.answeredAt - b.answeredAt)[0];
  const after = run.reads.filter((r) => !r.fresh && r.sentAt >= namesMovedAt + 3000 && r.failure === undefined);
  return {
    writesBackMs: back === undefined ? null : back.answeredAt - promotedAt,
    readsOnReaderAfterPct: after.length === 0 ? 0 : Math.round((1000 * after.filter((r) => r.onReader === true).length) / after.length) / 10,
    plainReadsAfter: after.length,
    failedReads: run.reads.filter((r) => r.failure !== undefined).length,
    failedWrites: run.writes.filter((w) => w.code !== undefined).length,
    lostWrites: run.lost.length,
  };
}
