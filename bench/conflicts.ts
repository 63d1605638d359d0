/**
 * Report 2: ten concurrent increments of one row, each a serializable transaction that reads the row
 * and then adds 1 to it, so that all but one of any overlapping transactions fail with a
 * serialization failure (40001) and must run again; the final value must be exactly the number of
 * increments. Compared: the gateway retrying a /v1/batch itself (exponential backoff with full
 * jitter, `retry.*` config) against a caller loop that retries at once (through the gateway with its
 * retries off, and on an in-process pg.Pool), plus the same backoff on the in-process pool and a
 * serial run (no conflicts) for reference.
 */
import pg from "pg";
import { Pool } from "undici";
import type { ConflictRow, TargetRow } from "./results.js";

const READ = "SELECT n FROM counters WHERE id = 1";
const INCREMENT = "UPDATE counters SET n = n + 1 WHERE id = 1";
/** A caller gives up after this many attempts; none should get near it. */
const MAX_ATTEMPTS = 100;

/** One increment; answers how many retries it took. Throws when it failed for good. */
type Increment = () => Promise<number>;

export interface ConflictTarget {
  name: string;
  role: TargetRow["role"];
  increment: Increment;
  /** Run the increments one after another instead of all at once. */
  serial?: boolean;
}

interface BatchAnswer {
  attempts?: number;
  error?: { code?: string; message?: string };
}

async function postBatch(http: Pool): Promise<{ status: number; body: BatchAnswer }> {
  const response = await http.request({
    method: "POST",
    path: "/v1/batch",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ statements: [{ sql: READ }, { sql: INCREMENT }], isolation: "serializable" }),
  });
  return { status: response.statusCode, body: (await response.body.json()) as BatchAnswer };
}

/** The gateway runs the transaction and retries it; its answer says how many attempts it took. */
export function gatewayRetries(http: Pool): Increment {
  return async () => {
    const { status, body } = await postBatch(http);
    if (status !== 200) throw new Error(`${status} ${body.error?.code}: ${body.error?.message}`);
    return (body.attempts ?? 1) - 1;
  };
}

/** The caller retries a serialization failure at once (the gateway in front has retries off). */
export function callerRetriesAtOnce(http: Pool): Increment {
  return async () => {
    for (let attempt = 1; ; attempt++) {
      const { status, body } = await postBatch(http);
      if (status === 200) return attempt - 1;
      if (body.error?.code !== "SERIALIZATION_FAILURE" || attempt >= MAX_ATTEMPTS) throw new Error(`${status} ${body.error?.code}: ${body.error?.message}`);
    }
  };
}

/** The gateway's policy (retry.ts): a uniform delay in [0, min(max, base * 2^(attempt-1))). */
export function fullJitter(baseDelayMs: number, maxDelayMs: number): (attempt: number) => number {
  return (attempt) => Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
}

/** BEGIN ISOLATION LEVEL SERIALIZABLE; read; increment; COMMIT on a pg.Pool, retried after `delayMs`. */
export function inProcessRetries(pool: pg.Pool, delayMs: (attempt: number) => number): Increment {
  return async () => {
    for (let attempt = 1; ; attempt++) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN ISOLATION LEVEL SERIALIZABLE");
        await client.query(READ);
        await client.query(INCREMENT);
        await client.query("COMMIT");
        return attempt - 1;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => undefined);
        const code = (err as { code?: string }).code;
        if ((code !== "40001" && code !== "40P01") || attempt >= MAX_ATTEMPTS) throw err;
      } finally {
        client.release();
      }
      const delay = delayMs(attempt);
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    }
  };
}

interface RoundResult {
  ms: number;
  retries: number;
  failed: number;
  finalValue: number;
  firstError?: string;
}

async function runRound(target: ConflictTarget, increments: number, admin: pg.Pool): Promise<RoundResult> {
  await admin.query("INSERT INTO counters (id, n) VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET n = 0");
  let failed = 0;
  let firstError: string | undefined;
  const one = () =>
    target.increment().catch((err: unknown) => {
      failed++;
      firstError ??= err instanceof Error ? err.message : String(err);
      return 0;
    });
  const started = performance.now();
  const retries: number[] = [];
  if (target.serial) for (let i = 0; i < increments; i++) retries.push(await one());
  else retries.push(...(await Promise.all(Array.from({ length: increments }, one))));
  const ms = performance.now() - started;
  const { rows } = await admin.query<{ n: number }>("SELECT n FROM counters WHERE id = 1");
  return { ms, retries: retries.reduce((a, b) => a + b, 0), failed, finalValue: rows[0]?.n ?? -1, firstError };
}

/** Every target once per round, interleaved; `step` wraps each round for the progress bar. */
export async function runConflicts(
  targets: ConflictTarget[],
  increments: number,
  rounds: number,
  admin: pg.Pool,
  step: (label: string, work: () => Promise<void>) => Promise<void>,
): Promise<ConflictRow[]> {
  const results: RoundResult[][] = targets.map(() => []);
  for (let round = 1; round <= rounds; round++) {
    await step(`round ${round}/${rounds}`, async () => {
      for (const [i, target] of targets.entries()) (results[i] as RoundResult[]).push(await runRound(target, increments, admin));
    });
  }
  return targets.map((target, i) => {
    const all = results[i] as RoundResult[];
    const times = all.map((r) => r.ms).sort((a, b) => a - b);
    return {
      target: target.name,
      role: target.role,
      rounds,
      medianMs: times[Math.floor((times.length - 1) / 2)] ?? Number.NaN,
      p90Ms: times[Math.min(times.length - 1, Math.floor(0.9 * times.length))] ?? Number.NaN,
      meanRetries: all.reduce((sum, r) => sum + r.retries, 0) / all.length,
      maxRetries: Math.max(...all.map((r) => r.retries)),
      wrongFinalValues: all.filter((r) => r.finalValue !== increments - r.failed).length,
      failed: all.reduce((sum, r) => sum + r.failed, 0),
      firstError: all.find((r) => r.firstError)?.firstError,
    };
  });
}
