/**
 * The result cache's correctness ledger (issue 38), written once for the CI test
 * (test/integration/cache/result-cache.test.ts: two gateways in the test's process) and the bench's cache
 * part (bench/cache-bench.ts: two gateway processes): writers and cached readers on both
 * gateways, which share one Valkey, and readers that carry the token of a write just made on the other
 * gateway. Every answer is checked: a read older than its token (`staleTokenReads`), a read that misses
 * a write acknowledged before the read began (`missedAckedWrites`), a request that failed. Valkey is
 * stopped in the middle and started again (empty); what was read after it returned is counted apart.
 *
 * The row read is one counter that writes only raise (`GREATEST(n, value)` with ever larger values),
 * so "sees the write" is "reads at least its value".
 */
import { performance } from "node:perf_hooks";
import { waitFor } from "./wait-for.js";

/** One gateway, as the ledger speaks to it: POST /v1/query with a JSON body. */
export type LedgerPost = (body: object) => Promise<{ status: number; body: LedgerAnswer }>;

/** What the ledger reads of an answer. */
export interface LedgerAnswer {
  rows?: Record<string, unknown>[];
  cache?: string;
  consistencyToken?: string;
}

export interface CacheLedgerRun {
  /** Two gateways (or more), sharing the database and Valkey; writers and readers alternate over them. */
  gateways: readonly LedgerPost[];
  /** Reads the counter (as column `n`). */
  readSql: string;
  /** Raises the counter to its one parameter. */
  writeSql: string;
  /** Whether writes answer with a consistency token (a MariaDB without a binary log gives none). */
  tokens: boolean;
  /** Stops Valkey (every connection to it gone), then starts it again. */
  valkey: { stop(): Promise<void>; start(): Promise<void> };
  /** Each phase (before the outage, during it, after it) lasts at least this long (0: only until its counts are reached). */
  minPhaseMs: number;
  /** Hits before the outage, bypasses during it, hits after it, that each phase waits for. */
  enough: number;
  /** How long a phase may wait for its counts before the run fails. */
  phaseTimeoutMs: number;
  /** The cache TTL the readers ask for. */
  ttlMs: number;
}

export interface LedgerCounts {
  reads: number;
  hits: number;
  bypasses: number;
  /** Reads that carried the token of a write made just before on the other gateway. */
  tokenReads: number;
  staleTokenReads: number;
  missedAckedWrites: number;
}

export interface CacheLedger extends LedgerCounts {
  writes: number;
  /** Requests (reads and writes) that did not answer 200, over the whole run. */
  failed: number;
  /** The same counts for reads begun after Valkey was back. */
  afterOutage: LedgerCounts;
  firstFailure?: string | undefined;
}

/** A request that could not be sent or answered counts as a failed one (status 0). */
const sent = (post: LedgerPost, body: object): Promise<{ status: number; body: LedgerAnswer }> =>
  post(body).catch((err: unknown) => ({ status: 0, body: { error: String(err) } as LedgerAnswer }));

const zeroCounts = (): LedgerCounts => ({ reads: 0, hits: 0, bypasses: 0, tokenReads: 0, staleTokenReads: 0, missedAckedWrites: 0 });

/** Pause between one writer's writes: between them, readers hit. */
const WRITE_PAUSE_MS = 150;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runCacheLedger(run: CacheLedgerRun): Promise<CacheLedger> {
  const ledger: CacheLedger = { ...zeroCounts(), writes: 0, failed: 0, afterOutage: zeroCounts() };
  const gateway = (i: number) => run.gateways[i % run.gateways.length] as LedgerPost;
  let next = 1000;
  // The largest value acknowledged so far, and when: a read begun later must see at least it.
  const acked: { at: number; value: number }[] = [];
  let backAt = Number.POSITIVE_INFINITY;
  let running = true;

  const fail = (what: string) => {
    ledger.failed++;
    ledger.firstFailure ??= what.slice(0, 300);
  };
  const writeOn = async (post: LedgerPost): Promise<{ value: number; token: string | undefined } | undefined> => {
    const value = next++;
    const answer = await sent(post, { sql: run.writeSql, params: [value] });
    if (answer.status !== 200) return void fail(`write: ${answer.status} ${JSON.stringify(answer.body)}`);
    ledger.writes++;
    acked.push({ at: performance.now(), value });
    return { value, token: answer.body.consistencyToken };
  };
  const readOn = async (post: LedgerPost, written?: { value: number; token: string }): Promise<void> => {
    const startedAt = performance.now();
    const answer = await sent(post, { sql: run.readSql, cache: { ttlMs: run.ttlMs }, ...(written ? { consistencyToken: written.token } : {}) });
    if (answer.status !== 200) return fail(`read: ${answer.status} ${JSON.stringify(answer.body)}`);
    const seen = Number(answer.body.rows?.[0]?.n);
    let mustSee = 0;
    for (const { at, value } of acked) if (at < startedAt && value > mustSee) mustSee = value;
    for (const counts of startedAt > backAt ? [ledger, ledger.afterOutage] : [ledger]) {
      counts.reads++;
      if (answer.body.cache === "hit" || answer.body.cache === "stale") counts.hits++;
      if (answer.body.cache === "bypass") counts.bypasses++;
      if (!(seen >= mustSee)) counts.missedAckedWrites++;
      if (written !== undefined) {
        counts.tokenReads++;
        if (!(seen >= written.value)) counts.staleTokenReads++;
      }
    }
  };

  const writers = [0, 1, 2, 3].map(async (i) => {
    while (running) {
      await writeOn(gateway(i));
      await pause(WRITE_PAUSE_MS);
    }
  });
  const readers = [0, 1, 2, 3, 4, 5].map(async (i) => {
    while (running) await readOn(gateway(i));
  });
  // Write on one gateway, read with the write's token on the other.
  const tokenReaders = [0, 1].map(async (i) => {
    while (running) {
      const written = await writeOn(gateway(i));
      if (written?.token !== undefined) await readOn(gateway(i + 1), { value: written.value, token: written.token });
      await pause(WRITE_PAUSE_MS);
    }
  });

  const phase = async (what: string, done: () => boolean) => {
    const endsAt = performance.now() + run.minPhaseMs;
    await waitFor(() => done() && performance.now() >= endsAt, run.phaseTimeoutMs + run.minPhaseMs, what);
  };
  try {
    await phase("hits and token reads before the outage", () => ledger.hits >= run.enough && (ledger.tokenReads >= run.enough || !run.tokens));
    await run.valkey.stop();
    const bypassesBefore = ledger.bypasses;
    await phase("reads bypassing the cache while Valkey is down", () => ledger.bypasses >= bypassesBefore + run.enough);
    await run.valkey.start();
    backAt = performance.now();
    await phase("hits (and token reads) again after Valkey is back", () => ledger.afterOutage.hits >= run.enough && (ledger.afterOutage.tokenReads >= run.enough || !run.tokens));
  } finally {
    running = false;
    await Promise.all([...writers, ...readers, ...tokenReaders]);
  }
  return ledger;
}
