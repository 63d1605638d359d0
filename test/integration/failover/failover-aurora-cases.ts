/**
 * The suites through an Aurora-style failover (issue 34 §1: "the existing suites run on the
 * stand-in"), written once for both Aurora stand-ins and run by failover-aurora-{postgres,mysql}.test.ts
 * after their load run, as a second failover of the same stand-in (the next reader promoted, made
 * durable first): while it happens,
 * - routing: callers write and read their own write back with its consistency token: no read misses it;
 * - idempotency: keyed writes are sent again under their key until answered (as the client SDK does):
 *   each key's row is there exactly once, and a key from before the failover replays after it;
 * - streams: streamed reads run on the writer (maxStalenessMs 0) and on readers: a stream cut by the
 *   failover ends with an error line (or fails before its first row), one that is not cut completes,
 *   and no stream sends a row twice or out of order.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { type AuroraFailoverCluster, type AuroraFailoverTimeline, type AuroraNames, failOverTheAuroraWay } from "../../support/aurora-failover.js";
import type { AuroraLoadInstance } from "../../support/aurora-failover-load.js";
import type { TestGateway } from "../../support/gateway.js";
import { waitFor } from "../../support/wait-for.js";

export interface SuitesThroughFailoverDialect {
  /** Creates `aurora_keyed (k)` and `aurora_tokens (id)` (the administrator's SQL, on the writer). */
  createTables: string[];
  keyedInsert: string;
  /** Rows per key: columns `k`, `n`. */
  keyedCounts: string;
  tokenInsert: string;
  /** Answers `n`: 1 when the id is there. */
  tokenRead: string;
  /** STREAM_ROWS rows, column `g` from 1 up, slowly enough (a few ms per hundred rows) to be running at the cut. */
  streamSql: string;
}

export const STREAM_ROWS = 3000;

export interface SuitesThroughFailoverContext<I extends AuroraLoadInstance> {
  standin: AuroraFailoverCluster<I>;
  names: AuroraNames;
  gw: TestGateway;
}

interface StreamOutcome {
  onWriter: boolean;
  status: number;
  rows: number[];
  /** The last line: the end (`rowCount`) or an error (`error.code`). */
  end: { rowCount?: number; attempts?: number; error?: { code: string } } | undefined;
}

interface Outcome {
  timeline: AuroraFailoverTimeline<AuroraLoadInstance>;
  keysAcknowledged: string[];
  keysGivenUp: string[];
  tokenReads: number;
  staleReads: string[];
  tokenWritesFailed: number;
  streams: StreamOutcome[];
}

async function stream(gw: TestGateway, sql: string, onWriter: boolean): Promise<StreamOutcome> {
  const response = await fetch(`${gw.baseUrl}/v1/query/stream`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ sql, rowMode: "array", timeoutMs: 20000, ...(onWriter ? { maxStalenessMs: 0 } : {}) }),
  });
  // A body cut short is what the caller sees of a stream the gateway could not end with a line.
  const text = await response.text().catch(() => "");
  const lines = text.split("\n").filter((line) => line.length > 0);
  if (response.status !== 200) return { onWriter, status: response.status, rows: [], end: lines[0] === undefined ? undefined : JSON.parse(lines[0]) };
  const rows = lines.slice(1, -1).map((line) => Number((JSON.parse(line) as unknown[])[0]));
  const last = lines.at(-1);
  return { onWriter, status: response.status, rows, end: last === undefined || lines.length < 2 ? undefined : JSON.parse(last) };
}

export function auroraSuitesThroughFailover<I extends AuroraLoadInstance>(context: () => SuitesThroughFailoverContext<I>, dialect: SuitesThroughFailoverDialect): void {
  describe("the routing, idempotency and stream suites through a second Aurora-style failover", () => {
    let outcome: Outcome;

    beforeAll(async () => {
      const { standin, names, gw } = context();
      for (const sql of dialect.createTables) await standin.writer().query(sql);
      const promote = standin.all().find((instance) => instance !== standin.writer());
      if (promote === undefined) throw new Error("no reader to promote");
      await standin.durableOn(promote);

      let stop = false;
      const keysAcknowledged: string[] = [];
      const keysGivenUp: string[] = [];
      const staleReads: string[] = [];
      let tokenReads = 0;
      let tokenWritesFailed = 0;
      const streams: StreamOutcome[] = [];
      const keyed = async () => {
        while (!stop) {
          const key = randomUUID();
          for (let attempt = 1; ; attempt++) {
            const answer = await gw.post("/v1/query", { sql: dialect.keyedInsert, params: [key], idempotencyKey: key, timeoutMs: 15000 });
            if (answer.status === 200) {
              keysAcknowledged.push(key);
              break;
            }
            if (attempt >= 20) {
              keysGivenUp.push(JSON.stringify(answer.body));
              break;
            }
          }
        }
      };
      const tokens = async () => {
        while (!stop) {
          const id = randomUUID();
          const write = await gw.post("/v1/query", { sql: dialect.tokenInsert, params: [id], timeoutMs: 15000 });
          if (write.status !== 200) {
            tokenWritesFailed++;
            continue;
          }
          const read = await gw.post("/v1/query", { sql: dialect.tokenRead, params: [id], consistencyToken: write.body.consistencyToken, bigNumbers: "number", timeoutMs: 15000 });
          tokenReads++;
          if (read.status !== 200 || Number(read.body.rows[0].n) !== 1) staleReads.push(`${id}: ${read.status} ${JSON.stringify(read.body)}`);
        }
      };
      const streamer = async (onWriter: boolean) => {
        while (!stop) streams.push(await stream(gw, dialect.streamSql, onWriter));
      };
      const load = Promise.all([keyed(), keyed(), tokens(), tokens(), streamer(true), streamer(true), streamer(false)]);
      try {
        await waitFor(() => keysAcknowledged.length >= 10 && tokenReads >= 10 && streams.length >= 2, 30000, "keyed writes, token reads and streams before the failover");
        const timeline = await failOverTheAuroraWay(standin, names, { promote, oldWriterBackAfterMs: 1500, namesMoveAfterMs: 3000 });
        const atEnd = { keys: keysAcknowledged.length, reads: tokenReads, streams: streams.length };
        await waitFor(
          () => keysAcknowledged.length >= atEnd.keys + 10 && tokenReads >= atEnd.reads + 10 && streams.length >= atEnd.streams + 2,
          30000,
          "keyed writes, token reads and streams after the failover",
        );
        stop = true;
        await load;
        outcome = { timeline, keysAcknowledged, keysGivenUp, tokenReads, staleReads, tokenWritesFailed, streams };
      } finally {
        stop = true;
        await load;
      }
    }, 180000);

    it("applies keyed writes exactly once across the failover, and a key from before replays after it", async () => {
      const { keysAcknowledged, keysGivenUp, timeline } = outcome;
      expect(keysGivenUp).toEqual([]);
      const counts = new Map((await timeline.newWriter.query<{ k: string; n: number | string }>(dialect.keyedCounts)).map((row) => [row.k, Number(row.n)]));
      expect(keysAcknowledged.filter((key) => counts.get(key) !== 1)).toEqual([]);
      // Every row is an acknowledged key's (a key given up would have left one of its own).
      expect([...counts.values()].reduce((a, b) => a + b, 0)).toBe(keysAcknowledged.length);
      const [first] = keysAcknowledged as [string];
      const replay = await context().gw.post("/v1/query", { sql: dialect.keyedInsert, params: [first], idempotencyKey: first });
      expect(replay.status).toBe(200);
      expect(replay.body.replayed).toBe(true);
      expect(counts.get(first)).toBe(1);
    });

    it("serves every token read with its write across the failover: none stale", () => {
      expect(outcome.tokenReads).toBeGreaterThan(20);
      expect(outcome.staleReads).toEqual([]);
    });

    it("ends every stream with its last row or an error line; none sends a row twice", () => {
      const { streams } = outcome;
      expect(streams.filter((s) => s.onWriter).length).toBeGreaterThan(0);
      // The cut met streams on the writer: ended by an error line, or opened again before their first row.
      expect(streams.some((s) => s.end?.error !== undefined || (s.end?.attempts ?? 1) > 1)).toBe(true);
      for (const s of streams) {
        // The rows sent are 1, 2, 3... with no repeat and no gap, however the stream ended.
        expect(s.rows.every((g, i) => g === i + 1), `rows of a stream ${JSON.stringify(s.end)}`).toBe(true);
        if (s.status !== 200) {
          expect(s.rows).toEqual([]);
          expect(s.end?.error?.code, `a stream refused before its first row (${s.status})`).toBeDefined();
        } else if (s.end?.error !== undefined) {
          // Cut after some rows, or after the last one before the end was read: the error says so.
          expect(s.rows.length).toBeLessThanOrEqual(STREAM_ROWS);
        } else {
          expect(s.end?.rowCount, "a stream without its last line").toBe(STREAM_ROWS);
          expect(s.rows.length).toBe(STREAM_ROWS);
        }
      }
    });
  });
}
