/**
 * An Aurora-style failover under load, as the failover test asserts it and the bench measures it:
 * writers insert rows with unique ids, readers send plain reads (that say whether they ran on a
 * reader) and slow fresh ones (maxStalenessMs 0: on the writer, in flight there when it dies) through the gateway, while the stand-in fails over the Aurora way (aurora-failover.ts). The
 * load goes on until some time after the names moved. Everything is recorded with wall-clock times, to
 * be judged by the caller.
 */
import type { AuroraStandin } from "./aurora-standin.js";
import { type AuroraFailoverTimeline, type AuroraNames, failOverTheAuroraWay } from "./aurora-failover.js";
import { waitFor } from "./wait-for.js";

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
  timeline: AuroraFailoverTimeline;
  writes: LoadWrite[];
  reads: LoadRead[];
  /** Acknowledged ids the new writer does not have. */
  lost: string[];
}

/** The table the load writes (created by `prepareAuroraFailoverLoad`). */
const TABLE = "aurora_failover_writes";

const PLAIN_READ = `select count(*)::int as n, pg_is_in_recovery() as on_reader from ${TABLE}`;
/** A slow read (200 ms on the server), so that some are running on the writer when it dies. */
const FRESH_READ = `select count(*)::int as n, pg_is_in_recovery() as on_reader from ${TABLE}, pg_sleep(0.2)`;

export async function prepareAuroraFailoverLoad(standin: AuroraStandin): Promise<void> {
  await standin.writer().query(`create table ${TABLE} (id text primary key)`);
}

function codeOf(body: unknown): string {
  return (body as { error?: { code?: string } }).error?.code ?? "NO_CODE";
}

export async function runAuroraFailoverLoad(post: PostQuery, standin: AuroraStandin, names: AuroraNames, options: AuroraFailoverLoadOptions): Promise<AuroraFailoverLoadRun> {
  const writes: LoadWrite[] = [];
  const reads: LoadRead[] = [];
  let stopAt = Number.POSITIVE_INFINITY;
  let sequence = 0;

  const writer = async (caller: number) => {
    while (Date.now() < stopAt) {
      const id = `${options.runId}-${caller}-${sequence++}`;
      const sentAt = Date.now();
      const answer = await post({ sql: `insert into ${TABLE} (id) values ($1)`, params: [id], timeoutMs: 15000 });
      writes.push({ id, sentAt, answeredAt: Date.now(), code: answer.status === 200 ? undefined : codeOf(answer.body) });
    }
  };
  const reader = async (fresh: boolean) => {
    while (Date.now() < stopAt) {
      const sentAt = Date.now();
      const answer = await post(fresh ? { sql: FRESH_READ, maxStalenessMs: 0, timeoutMs: 15000 } : { sql: PLAIN_READ, timeoutMs: 15000 });
      const row = (answer.body as { rows?: { on_reader?: boolean }[] }).rows?.[0];
      reads.push({
        fresh,
        sentAt,
        answeredAt: Date.now(),
        onReader: answer.status === 200 ? row?.on_reader === true : undefined,
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
    const timeline = await failOverTheAuroraWay(standin, names, options);
    stopAt = timeline.namesMovedAt + options.afterNamesMovedMs;
    await load;
    const acknowledged = writes.filter((w) => w.code === undefined).map((w) => w.id);
    const present = new Set(
      (await timeline.newWriter.query<{ id: string }>(`select id from ${TABLE} where id = any($1)`, [acknowledged])).map((row) => row.id),
    );
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
  failedReads: number;
  /** Writes that failed (in flight on the writer when it died: their outcome is unknown to the caller). */
  failedWrites: number;
  lostWrites: number;
}

export function auroraFailoverFigures(run: AuroraFailoverLoadRun): AuroraFailoverFigures {
  const { promotedAt, namesMovedAt } = run.timeline;
  const back = run.writes.filter((w) => w.code === undefined && w.answeredAt >= promotedAt).sort((a, b) => a.answeredAt - b.answeredAt)[0];
  const after = run.reads.filter((r) => !r.fresh && r.sentAt >= namesMovedAt + 3000 && r.failure === undefined);
  return {
    writesBackMs: back === undefined ? null : back.answeredAt - promotedAt,
    readsOnReaderAfterPct: after.length === 0 ? 0 : Math.round((1000 * after.filter((r) => r.onReader === true).length) / after.length) / 10,
    failedReads: run.reads.filter((r) => r.failure !== undefined).length,
    failedWrites: run.writes.filter((w) => w.code !== undefined).length,
    lostWrites: run.lost.length,
  };
}
