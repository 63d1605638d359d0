/**
 * Reads of any size (POOLGATE_BENCH_ONLY=streaming): POOLGATE_BENCH_STREAM_ROWS rows (10 million)
 * streamed through the gateway (POST /v1/query/stream), beside the largest buffered /v1/query result
 * that fits the default limits and the same rows streamed, on PostgreSQL and MariaDB. For each read:
 * throughput (rows/s, MB/s of NDJSON or JSON the caller received) and the gateway process's resident
 * memory over time (VmRSS from /proc/<pid>/status, sampled every 100 ms). Not a test: no assertions.
 */
import { readFileSync } from "node:fs";
import { Agent, request } from "undici";
import { benchUrlOf, prepareMysql, preparePostgres } from "./databases.js";
import { type Server, startGateway } from "./processes.js";
import type { StreamingRow } from "./results.js";

type Step = <T>(label: string, estimateS: number, run: () => Promise<T>) => Promise<T>;

const SAMPLE_MS = 100;

interface EngineSql {
  engine: "PostgreSQL" | "MariaDB";
  /** `g, md5(g)` for g in 1..n. */
  rows(n: number): string;
  /**
   * The largest buffered read that fits limits.maxResultBytes (16 MiB), in rows, as each engine counts a
   * row: PostgreSQL the values' text (about 38 bytes), MySQL their approximate JSON size (about 50).
   */
  bufferedRows: number;
}

const POSTGRES_SQL: EngineSql = { engine: "PostgreSQL", rows: (n) => `select g, md5(g::text) as h from generate_series(1, ${n}) g`, bufferedRows: 400_000 };

/** Rows 1..n (n ≤ 10^8) from cross-joined digits: MariaDB has no generate_series, and recursive CTEs stop at 1000. */
function mysqlRows(n: number): string {
  const digits = "(select 0 d union all select 1 union all select 2 union all select 3 union all select 4 union all select 5 union all select 6 union all select 7 union all select 8 union all select 9)";
  const places = Math.max(1, Math.ceil(Math.log10(n)));
  const names = Array.from({ length: places }, (_, i) => `d${i}`);
  const value = names.map((name, i) => `${10 ** i} * ${name}.d`).join(" + ");
  return `select ${value} + 1 as g, md5(${value} + 1) as h from ${names.map((name) => `${digits} ${name}`).join(", ")} where ${value} < ${n}`;
}

const MYSQL_SQL: EngineSql = { engine: "MariaDB", rows: mysqlRows, bufferedRows: 300_000 };

/** The gateway's resident memory in MiB, from /proc. */
function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

/** Samples the gateway's RSS every 100 ms while `read` runs. */
async function sampled(pid: number, read: () => Promise<{ rows: number; bytes: number }>): Promise<{ rows: number; bytes: number; seconds: number; samples: { atS: number; rssMiB: number }[] }> {
  const started = performance.now();
  const samples: { atS: number; rssMiB: number }[] = [{ atS: 0, rssMiB: rssMiB(pid) }];
  const timer = setInterval(() => samples.push({ atS: (performance.now() - started) / 1000, rssMiB: rssMiB(pid) }), SAMPLE_MS);
  try {
    const { rows, bytes } = await read();
    const seconds = (performance.now() - started) / 1000;
    samples.push({ atS: seconds, rssMiB: rssMiB(pid) });
    return { rows, bytes, seconds, samples };
  } finally {
    clearInterval(timer);
  }
}

/** POSTs and reads the body as it arrives, counting bytes and lines; the answer must be a 200. */
async function post(agent: Agent, url: string, body: object): Promise<{ status: number; bytes: number; lines: number; tail: string }> {
  const response = await request(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), dispatcher: agent });
  let bytes = 0;
  let lines = 0;
  let tail = "";
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
    tail = (tail + chunk.toString("utf8", Math.max(0, chunk.length - 512))).slice(-512);
  }
  if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}: ${tail.slice(-300)}`);
  return { status: response.statusCode, bytes, lines, tail };
}

function row(engine: string, read: string, result: Awaited<ReturnType<typeof sampled>>, before: number): StreamingRow {
  const rss = result.samples.map((sample) => sample.rssMiB);
  // RSS at each tenth of the read: flat when streaming, a climb and a peak when buffered.
  const tenths = Array.from({ length: 11 }, (_, i) => {
    const at = (result.seconds * i) / 10;
    return result.samples.reduce((best, sample) => (Math.abs(sample.atS - at) < Math.abs(best.atS - at) ? sample : best)).rssMiB;
  });
  return {
    engine,
    read,
    rows: result.rows,
    megabytes: result.bytes / 1e6,
    seconds: result.seconds,
    rowsPerSecond: result.rows / result.seconds,
    megabytesPerSecond: result.bytes / 1e6 / result.seconds,
    rssBeforeMiB: before,
    rssPeakMiB: Math.max(...rss),
    rssTenthsMiB: tenths,
  };
}

async function engineRows(sql: EngineSql, gateway: Server, streamRows: number, step: Step, out: StreamingRow[]): Promise<void> {
  const pid = gateway.child.pid;
  if (pid === undefined) throw new Error("the gateway has no pid");
  const agent = new Agent({ connections: 1 });
  try {
    // Warm: sessions open, statements prepared, code paths compiled.
    await post(agent, `${gateway.url}/v1/query/stream`, { sql: sql.rows(10_000), rowMode: "array" });
    await post(agent, `${gateway.url}/v1/query`, { sql: sql.rows(10_000), rowMode: "array" });
    const measure = async (read: string, path: string, rows: number, estimateS: number) => {
      const before = rssMiB(pid);
      const result = await step(`${sql.engine}: ${read}`, estimateS, () =>
        sampled(pid, async () => {
          const answer = await post(agent, `${gateway.url}${path}`, { sql: sql.rows(rows), rowMode: "array", timeoutMs: 300_000 });
          // NDJSON: a header line, the rows, an end line; JSON: the whole result (rows counted from the request).
          return { rows: path.endsWith("stream") ? answer.lines - 2 : rows, bytes: answer.bytes };
        }),
      );
      out.push(row(sql.engine, read, result, before));
    };
    // Streams first: a process rarely hands memory back, so a buffered read first would hide a stream's growth under its peak.
    const buffered = sql.bufferedRows;
    await measure(`streamed, ${streamRows.toLocaleString("en")} rows`, "/v1/query/stream", streamRows, streamRows / 300_000);
    await measure(`streamed, ${buffered.toLocaleString("en")} rows`, "/v1/query/stream", buffered, 2);
    await measure(`buffered /v1/query, ${buffered.toLocaleString("en")} rows (about the largest that fits limits)`, "/v1/query", buffered, 3);
  } finally {
    await agent.close();
  }
}

/**
 * Runs both engines, adding their rows to `rows` as they are measured; an engine that fails is
 * reported in the answer's failures and the other still runs.
 */
export async function runStreaming(
  adminUrl: string,
  mysqlAdminUrl: string,
  streamRows: number,
  step: Step,
  rows: StreamingRow[],
): Promise<{ versions: { postgres?: string; mariadb?: string }; failures: string[] }> {
  const versions: { postgres?: string; mariadb?: string } = {};
  const failures: string[] = [];
  for (const [sql, admin] of [
    [POSTGRES_SQL, adminUrl],
    [MYSQL_SQL, mysqlAdminUrl],
  ] as const) {
    let gateway: Server | undefined;
    try {
      if (sql === POSTGRES_SQL) versions.postgres = await preparePostgres(admin);
      else versions.mariadb = await prepareMysql(admin);
      // One gateway per engine, so each starts from the same memory.
      gateway = await startGateway({ clusters: { default: { writerUrl: benchUrlOf(admin) } }, pool: { maxSize: 2 }, statements: { maxTimeoutMs: 300_000 } });
      await engineRows(sql, gateway, streamRows, step, rows);
    } catch (err) {
      failures.push(`streaming, ${sql.engine}: ${err instanceof Error ? err.message : String(err)}`.slice(0, 2000));
    } finally {
      await gateway?.stop();
    }
  }
  return { versions, failures };
}
