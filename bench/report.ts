/**
 * The printed report: one table per scenario (targets as rows, the gateway's edge over each
 * alternative as a column), the field report's own figures beside ours, and a verdict line each.
 * Reads only BenchResults, so the same figures reach stdout, bench.json and the chart.
 */
import { profileLines } from "./cpu-profile.js";
import { INSERT_PARTS } from "./inserts.js";
import { type InstructionLedger, LEDGER_SHAPE, type SimulatedMisses } from "./instructions-bench.js";
import { type AuroraFailoverRow, type AuroraRow, type BenchResults, type CacheResults, type ClientRow, HTTP_ALONE, PIPELINED_FORWARDER, type ConflictRow, type FailoverEngineResult, type FailoverRunFigures, type InsertRow, type IsolationRow, type StreamingRow, type TargetRow, isAuroraFailoverRow } from "./results.js";

/** The field reports' figures (/work/shared/reference/seed-scenarios.md), quoted beside ours. */
export const REFERENCE = {
  burst: { dbcp2MaxMs: 22800, hikariMaxMs: 347 },
  inserts: { count: 100000, newConnectionMs: 1834591, dbcp2Ms: 866, hikariMs: 637 },
  conflicts: { serialMs: 297, immediateMs: 370, immediateRetries: "more than 20 sometimes", backoffMs: 394, backoffRetries: "about 10" },
  readScaling: { primaryTps: 77.5, twoReplicasTps: 54.5 },
} as const;

export function num(value: number | undefined, digits?: number): string {
  if (value === undefined || !Number.isFinite(value)) return "-";
  const d = digits ?? (Math.abs(value) < 1 ? 3 : Math.abs(value) < 10 ? 2 : Math.abs(value) < 100 ? 1 : 0);
  return value.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });
}

/** How many times better poolgate is than `other` (>1: poolgate better); `lowerIsBetter` for latencies. */
export function edge(poolgate: number, other: number, lowerIsBetter: boolean): string {
  const ratio = lowerIsBetter ? other / poolgate : poolgate / other;
  return Number.isFinite(ratio) && ratio > 0 ? `${num(ratio, ratio < 10 ? 2 : ratio < 100 ? 1 : 0)}x` : "-";
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  // The first column (the target) reads left-aligned, the figures right-aligned.
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)];
}

const errorsOf = (r: TargetRow) => (r.errorsAllRounds === 0 ? "0" : `${num(r.errorsAllRounds, 0)}/${num(r.requestsAllRounds, 0)}`);
const poolgateOf = <T extends { role: string }>(rows: T[]) => rows.find((r) => r.role === "poolgate");
/** The naive forwarder of a steady-load table (the issue's ratios are taken against it). */
const naiveOf = (rows: TargetRow[]) => rows.find((r) => r.target.startsWith("naive"));
const PIPELINED_NAMES: readonly string[] = Object.values(PIPELINED_FORWARDER);

/** The range of poolgate's round-by-round ratio to a target, when rounds disagreed. */
function spread(r: TargetRow): string {
  return r.ratioToPoolgate ? ` (${num(r.ratioToPoolgate.min, 2)}–${num(r.ratioToPoolgate.max, 2)})` : "";
}

function throughputTable(title: string, rows: TargetRow[]): string[] {
  const ref = poolgateOf(rows);
  const body = rows.map((r) => [
    r.target,
    num(r.throughput, 0),
    num(r.p50),
    num(r.p99),
    num(r.max),
    r.cpuUsPerRequest === undefined ? "-" : `${num(r.cpuUsPerRequest, 0)}${r.cpuUsPerRequestByThreads === undefined ? "" : ` (${num(r.cpuUsPerRequestByThreads, 0)})`}`,
    r.driverCpuUsPerRequest === undefined ? "-" : num(r.driverCpuUsPerRequest, 0),
    r.databaseCpuUsPerRequest === undefined ? "-" : num(r.databaseCpuUsPerRequest, 0),
    allCpu(r) === undefined ? "-" : num(allCpu(r) as number, 0),
    errorsOf(r),
    ref && r !== ref ? `${edge(ref.throughput, r.throughput, false)}${spread(r)}` : "",
  ]);
  return [
    `${title}; ${ref?.rounds ?? "?"} rounds; CPU µs per request of the serving process (its threads), the load driver, the database servers, and all three`,
    ...table(["target", "req/s", "p50 ms", "p99 ms", "max ms", "serving (threads)", "driver", "database", "all", "errors", "poolgate req/s ÷ this (range over rounds)"], body),
  ];
}

/** CPU per request of everything that ran it: the serving process, the driver (the serving process itself when in-process) and the database. */
function allCpu(r: TargetRow): number | undefined {
  if (r.cpuUsPerRequest === undefined || r.databaseCpuUsPerRequest === undefined) return undefined;
  return r.cpuUsPerRequest + (r.driverCpuUsPerRequest ?? 0) + r.databaseCpuUsPerRequest;
}

/**
 * What the machine's cores allow: with every process of a target sharing them, its throughput can be
 * at most cores ÷ its CPU per request in all. Says what poolgate's CPU in all would have to be for each
 * ratio the issue asks of it, given the naive forwarder's figures in the same run.
 */
function cpuCeiling(rows: TargetRow[], cores: number): string | undefined {
  const ref = poolgateOf(rows);
  const naive = naiveOf(rows);
  const mine = ref && allCpu(ref);
  const theirs = naive && allCpu(naive);
  if (!ref || !naive || mine === undefined || theirs === undefined) return undefined;
  const ceiling = (us: number) => num((cores * 1e6) / us, 0);
  const driver = ref.driverCpuUsPerRequest ?? 0;
  const database = ref.databaseCpuUsPerRequest ?? 0;
  return (
    `CPU in all per request: poolgate ${num(mine, 0)} µs (${cores} cores allow ${ceiling(mine)} req/s), ${naive.target} ${num(theirs, 0)} µs (${ceiling(theirs)} req/s); ` +
    `for 1.2x / 1.5x the ${naive.target}'s measured rate poolgate would need ${num((cores * 1e6) / (1.2 * naive.throughput), 0)} / ${num((cores * 1e6) / (1.5 * naive.throughput), 0)} µs in all, ` +
    `of which its driver and database take ${num(driver + database, 0)} µs now` +
    httpFloor(rows, naive, database, cores)
  );
}

/**
 * What HTTP alone costs in all (the driver and a server that answers without a database), and what is
 * left of the budget for 1.5x the naive forwarder's rate once the database's own work is added: the
 * room for a database client and everything the gateway does.
 */
function httpFloor(rows: TargetRow[], naive: TargetRow, database: number, cores: number): string {
  const httpAlone = rows.find((r) => r.target === HTTP_ALONE);
  const http = httpAlone && allCpu(httpAlone);
  if (http === undefined) return "";
  const left = (cores * 1e6) / (1.5 * naive.throughput) - http - database;
  return `; HTTP alone costs ${num(http, 0)} µs in all (driver and echo server), so 1.5x leaves ${num(left, 0)} µs per request for a database client and everything the gateway does`;
}

/**
 * What pipelining buys a forwarder with nothing else in the way: the pipelining forwarder's rate and
 * database CPU against the naive forwarder's (the design change the gateway does not make).
 */
function pipeliningLine(rows: TargetRow[]): string | undefined {
  const naive = naiveOf(rows);
  const pipelined = rows.find((r) => PIPELINED_NAMES.includes(r.target));
  if (!naive || !pipelined) return undefined;
  const cpu = (r: TargetRow) => `serving ${num(r.cpuUsPerRequest ?? Number.NaN, 0)} + database ${num(r.databaseCpuUsPerRequest ?? Number.NaN, 0)} µs`;
  return (
    `pipelining, with no gateway logic: the ${pipelined.target} serves ${num(pipelined.throughput / naive.throughput, 2)}x the ${naive.target}'s rate ` +
    `(${cpu(pipelined)} per request, against ${cpu(naive)})`
  );
}

function burstTable(title: string, rows: TargetRow[]): string[] {
  const ref = poolgateOf(rows);
  const body = rows.map((r) => [
    r.target,
    num(r.p50),
    num(r.p90),
    num(r.p99),
    num(r.max),
    num(r.throughput, 0),
    errorsOf(r),
    ref && r !== ref ? `${edge(ref.p99, r.p99, true)} / ${edge(ref.max, r.max, true)}${spread(r)}` : "",
  ]);
  const reference = [
    "(report 1) Tomcat + DBCP2, 750 threads", "", "", "", num(REFERENCE.burst.dbcp2MaxMs, 0), "", "", "",
  ];
  const hikari = ["(report 1) Tomcat + HikariCP, 750 threads", "", "", "", num(REFERENCE.burst.hikariMaxMs, 0), "", "", ""];
  return [title, ...table(["target", "p50 ms", "p90 ms", "p99 ms", "max ms", "req/s", "errors", "this ÷ poolgate p99 / max"], [...body, reference, hikari])];
}

function insertsTable(rows: InsertRow[]): string[] {
  const ref = poolgateOf(rows);
  const count = rows[0]?.count ?? REFERENCE.inserts.count;
  const body = rows.map((r) => [
    r.target,
    `${num(r.ran, 0)}${r.extrapolated ? " (sample)" : ""}`,
    `${r.extrapolated ? "~" : ""}${num(r.totalMs, 0)}${r.extrapolated ? " (extrapolated)" : ""}`,
    num(r.perInsertUs, 1),
    r.errors === 0 ? "0" : num(r.errors, 0),
    ref && r !== ref ? edge(ref.perInsertUs, r.perInsertUs, true) : "",
  ]);
  const scale = count / REFERENCE.inserts.count;
  const quoted = (name: string, ms: number) => [`(report 4) ${name}`, "", num(ms * scale, 0), num((ms * 1000) / REFERENCE.inserts.count, 1), "", ""];
  return [
    `report 4: ${num(count, 0)} sequential inserts by one caller (unlogged table), pooled vs a new connection each`,
    ...table(
      ["target", "inserts run", `total ms for ${num(count, 0)}`, "µs/insert", "errors", "this ÷ poolgate"],
      [
        ...body,
        quoted("new connection each (embedded DB)", REFERENCE.inserts.newConnectionMs),
        quoted("DBCP2", REFERENCE.inserts.dbcp2Ms),
        quoted("HikariCP", REFERENCE.inserts.hikariMs),
      ],
    ),
  ];
}

function conflictsTable(rows: ConflictRow[], increments: number): string[] {
  const body = rows.map((r) => [
    r.target,
    num(r.medianMs, 1),
    num(r.p90Ms, 1),
    num(r.meanRetries, 1),
    num(r.maxRetries, 0),
    r.failed === 0 && r.wrongFinalValues === 0 ? `${increments} in ${r.rounds}/${r.rounds}` : `WRONG in ${r.wrongFinalValues}, ${r.failed} failed`,
  ]);
  const R = REFERENCE.conflicts;
  return [
    `report 2: ${increments} concurrent increments of one row (serializable read + update), automatic retry; ${rows[0]?.rounds ?? 0} rounds`,
    ...table(
      ["target", "median ms", "p90 ms", "retries/round (mean)", "max", "final value"],
      [
        ...body,
        ["(report 2) DSQL, serial, no conflicts", num(R.serialMs, 0), "", "0", "", ""],
        ["(report 2) DSQL, immediate retry", num(R.immediateMs, 0), "", R.immediateRetries, "", ""],
        ["(report 2) DSQL, jittered backoff", num(R.backoffMs, 0), "", R.backoffRetries, "", ""],
      ],
    ),
  ];
}

export function reportLines(results: BenchResults): string[] {
  const out: string[] = [];
  const s = results.settings;
  const m = results.machine;
  out.push(
    `poolgate bench — ${m.cpus} CPUs, node ${m.node}; ${[m.postgres, m.mariadb, m.pgbouncer].filter(Boolean).join("; ")}`,
    `pool size ${s.poolSize} everywhere (gateway, in-process pools, PgBouncer's server pool); medians of ${s.rounds} interleaved rounds; errors over all rounds; ` +
      `load average ${num(m.loadBefore, 1)} before, ${num(m.loadAfter, 1)} after`,
  );
  if (m.loadBefore > m.cpus / 2) {
    out.push(`WARNING: the machine was busy before the run (load average ${num(m.loadBefore, 1)} on ${m.cpus} CPUs): other work skews every figure below`);
  }
  const section = (lines: string[], verdict: string) => out.push("", ...lines, `=> ${verdict}`);
  const t = results.throughput;
  const withCeiling = (rows: TargetRow[]) => [throughputVerdict(rows), cpuCeiling(rows, m.cpus), pipeliningLine(rows)].filter(Boolean).join("\n=> ");
  if (t?.postgres) section(throughputTable(`steady load: ${s.callers} concurrent callers, point selects, PostgreSQL, ${s.durationMs} ms per run`, t.postgres), withCeiling(t.postgres));
  if (t?.mysql) section(throughputTable(`steady load: ${s.callers} concurrent callers, point selects, MariaDB (MySQL engine)`, t.mysql), withCeiling(t.mysql));
  const b = results.burst;
  const burstTitle = (engine: string) => `report 1: ${s.burstCallers} concurrent callers on a pool of ${s.poolSize}, ${s.burstRequests} point selects each, ${engine}`;
  if (b?.postgres) section(burstTable(burstTitle("PostgreSQL"), b.postgres), burstVerdict(b.postgres));
  if (b?.mysql) section(burstTable(burstTitle("MariaDB (MySQL engine)"), b.mysql), burstVerdict(b.mysql));
  if (results.inserts) section(insertsTable(results.inserts), insertsVerdict(results.inserts));
  if (results.conflicts) section(conflictsTable(results.conflicts, Number(s.conflictCallers)), conflictsVerdict(results.conflicts));
  out.push(...topologyLines(results));
  if (results.isolation) section(isolationTable(results.isolation, Number(s.callers)), isolationVerdict(results.isolation));
  if (results.cache) section(cacheTable(results.cache, Number(s.callers)), cacheVerdict(results.cache));
  if (results.tracing) section(throughputTable(`tracing cost: ${s.callers} concurrent callers, point selects, PostgreSQL (docs/tracing.md)`, results.tracing), tracingVerdict(results.tracing));
  for (const p of results.profiles ?? []) {
    out.push("", ...profileLines(`CPU profile, ${p.engine}, ${{ gateway: "poolgate native", "gateway-hits": "poolgate native, result-cache hits", naive: "naive forwarder" }[p.server]} (${num(p.throughput, 0)} req/s under --cpu-prof)`, p.summary, p.requests, p.cpuUsPerRequest), `  profile: ${p.file}`);
    if (p.syscallsPerRequest) {
      out.push(`  system calls per request: ${Object.entries(p.syscallsPerRequest).map(([name, perRequest]) => `${name} ${num(perRequest, 2)}`).join(", ")}`);
    }
  }
  if (results.instructions) out.push(...ledgerLines(results.instructions));
  if (results.streaming) section(streamingTable(results.streaming), streamingVerdict(results.streaming));
  if (results.aurora) {
    const tokenRows = results.aurora.filter((r): r is AuroraRow => !isAuroraFailoverRow(r));
    const failoverRows = results.aurora.filter(isAuroraFailoverRow);
    if (tokenRows.length > 0) {
      section(
        tokenRows.map((r) => `aurora (${r.engine} stand-in, ${r.lagMs} ms lag, tokenWaitMs ${r.tokenWaitMs}): ${r.tokenReads} token reads, ${r.tokenReadsOnReplicasPct}% on readers, ${r.staleReads} stale, ${r.errors} errors`),
        tokenRows.every((r) => r.tokenReadsOnReplicasPct >= 90 && r.staleReads === 0) ? "aurora: targets met (>= 90% of token reads on readers, 0 stale)" : "aurora: targets NOT met (>= 90% of token reads on readers, 0 stale)",
      );
    }
    if (failoverRows.length > 0) {
      const met = (r: AuroraFailoverRow) =>
        r.writesBackMs !== null && r.writesBackMs <= 1000 && r.failedReads === 0 && r.lostWrites === 0 && r.plainReadsAfter > 0 && r.readsOnReaderAfterPct >= 90;
      section(
        failoverRows.map(
          (r) =>
            `aurora failover (${r.engine} stand-in, ${r.writers} writers, ${r.readers} readers + ${r.freshReaders} fresh, old writer back after ${r.oldWriterBackAfterMs} ms, names move after ${r.namesMoveAfterMs} ms): writes back ${r.writesBackMs ?? "never"} ms after the promotion, ${r.readsOnReaderAfterPct}% of the ${r.plainReadsAfter} plain reads on readers 3 s after the names moved, ${r.failedReads} failed reads, ${r.lostWrites} acknowledged writes lost, ${r.failedWrites} writes with unknown outcome (in flight at the cut); ${r.writes} writes, ${r.reads} reads`,
        ),
        failoverRows.every(met)
          ? "aurora failover: targets met (writes back <= 1 s, 0 failed reads, 0 lost, >= 90% of plain reads on readers 3 s after the names moved)"
          : "aurora failover: targets NOT met (writes back <= 1 s, 0 failed reads, 0 lost, >= 90% of plain reads on readers 3 s after the names moved)",
      );
    }
  }
  const switchover = results.lifecycle;
  if (switchover?.failedDuringSwitchover !== undefined && switchover.writesBackAfterSwitchoverMs !== undefined) {
    section(
      (switchover.switchover ?? []).map(
        (r) =>
          `lifecycle (Blue/Green switchover, Aurora ${r.engine === "postgres" ? "PostgreSQL" : "MySQL"} stand-in): writes blocked ${r.switchoverMs} ms, ${r.failedDuringSwitchover} requests failed during it ` +
          `(${r.failedInFlightAtSwitchover} in flight when the sessions were dropped), writes back ${r.writesBackAfterSwitchoverMs} ms after it ended`,
      ),
      switchover.failedDuringSwitchover === 0 && switchover.writesBackAfterSwitchoverMs <= 1000
        ? "lifecycle: switchover targets met (0 failed beyond those in flight, writes back <= 1 s)"
        : "lifecycle: switchover targets NOT met (0 failed beyond those in flight, writes back <= 1 s)",
    );
  }
  const resume = results.lifecycle?.resume;
  if (resume !== undefined) {
    section(
      resume.map((r) => `pause and resume (${r.engine}, connects ${r.whilePaused === "hold" ? "held" : "refused"}, stand-in resumes in ${r.standInResumeMs} ms): first of ${r.callers} callers answered after ${r.resumeHeldMs} ms, ${r.failedDuringResume} failed`),
      resume.every((r) => r.failedDuringResume === 0) ? "lifecycle: resume target met (no request failed during a resume)" : "lifecycle: resume target NOT met (requests failed during a resume)",
    );
  }
  if (results.client) out.push("", ...clientTable(results.client));
  if (results.notes.length > 0) out.push("", "left out or adapted:", ...results.notes.map((n) => `  - ${n}`));
  if (results.failures.length > 0) out.push("", "FAILED parts (the rest above is valid):", ...results.failures.map((f) => `  - ${f}`));
  const scenarios: [string, TargetRow[] | undefined][] = [
    ["steady load, PostgreSQL", t?.postgres],
    ["steady load, MariaDB", t?.mysql],
    ["report 1, PostgreSQL", b?.postgres],
    ["report 1, MariaDB", b?.mysql],
  ];
  const errors = scenarios.flatMap(([scenario, rows]) => (rows ?? []).filter((r) => r.firstError).map((r) => `  ${scenario}, ${r.target}: ${r.firstError?.slice(0, 160)}`));
  if (errors.length > 0) out.push("", "first error of each target that had errors:", ...errors);
  return out;
}

function clientTable(rows: ClientRow[]): string[] {
  const body = rows.map((r) => [r.driver, num(r.installedKiB, 0), num(r.bundleKiB, 1), num(r.importAndFirstQueryMs, 1), num(r.processMs, 0)]);
  return [
    "the client a Lambda installs: sizes, and a fresh Node process importing it and running one query against a local stub of each protocol (median)",
    ...table(["driver", "installed KiB", "handler bundle KiB (min, ESM)", "import + first query ms", "whole process ms"], body),
  ];
}

function streamingTable(rows: StreamingRow[]): string[] {
  const body = rows.map((r) => [
    r.engine,
    r.read,
    num(r.rowsPerSecond, 0),
    num(r.megabytesPerSecond, 1),
    num(r.seconds, 1),
    num(r.rssBeforeMiB, 0),
    num(r.rssPeakMiB, 0),
    num(r.rssPeakMiB - r.rssBeforeMiB, 0),
  ]);
  const over = rows.map((r) => `  ${r.engine}, ${r.read}: RSS MiB at each tenth of the read: ${r.rssTenthsMiB.map((v) => num(v, 0)).join(" ")}`);
  return [
    "reads of any size: the gateway's resident memory (VmRSS, sampled every 100 ms) and throughput, buffered /v1/query vs /v1/query/stream",
    ...table(["engine", "read", "rows/s", "MB/s", "s", "RSS before MiB", "RSS peak MiB", "growth MiB"], body),
    ...over,
  ];
}

function streamingVerdict(rows: StreamingRow[]): string {
  return ["PostgreSQL", "MariaDB"]
    .map((engine) => {
      const mine = rows.filter((r) => r.engine === engine);
      const buffered = mine.find((r) => r.read.startsWith("buffered"));
      const long = mine.find((r) => r.read.startsWith("streamed") && r.rows === Math.max(...mine.map((m) => m.rows)));
      if (!buffered || !long || long === buffered) return undefined;
      return `${engine}: ${num(long.rows, 0)} rows streamed with the gateway's RSS growing ${num(long.rssPeakMiB - long.rssBeforeMiB, 0)} MiB (${num(long.rowsPerSecond, 0)} rows/s), where a buffered read of ${num(buffered.rows, 0)} rows grew it ${num(buffered.rssPeakMiB - buffered.rssBeforeMiB, 0)} MiB`;
    })
    .filter((line) => line !== undefined)
    .join("; ");
}

function cacheTable(cache: CacheResults, callers: number): string[] {
  const body = cache.hits.map((r) => [
    r.engine === "postgres" ? "PostgreSQL" : "MariaDB",
    r.store,
    r.network,
    num(r.uncachedThroughput, 0),
    num(r.uncachedP50),
    num(r.hitThroughput, 0),
    num(r.hitP50),
    `${num(r.hitThroughputRatio, 1)}× (${num(r.hitRatioRange[0], 1)}–${num(r.hitRatioRange[1], 1)})`,
    num(r.hitP50Ratio, 2),
    num(r.uncachedServerCpuUsPerRequest, 0),
    num(r.hitServerCpuUsPerRequest, 0),
    num(r.hitDriverCpuUsPerRequest, 0),
    r.errors === 0 ? "0" : num(r.errors, 0),
  ]);
  const alone = cache.httpAlone;
  const echo = alone
    ? [
        `  HTTP alone (echo server, same driver): ${num(alone.throughput, 0)} req/s, p50 ${num(alone.p50)} ms, server CPU ${num(alone.serverCpuUsPerRequest, 0)} µs/req, driver CPU ${num(alone.driverCpuUsPerRequest, 0)} µs/req: no hit goes above this rate here`,
      ]
    : [];
  const ledger = cache.ledger.map(
    (r) =>
      `  ledger, ${r.engine === "postgres" ? "PostgreSQL" : "MariaDB"} (two gateways, one redis-server, stopped and started mid-run, ${num(r.seconds, 0)} s): ` +
      `${r.reads} reads (${r.hits} hits, ${r.bypasses} bypasses), ${r.writes} writes, ${r.tokenReads} token reads; staleTokenReads ${r.staleTokenReads}, missedAckedWrites ${r.missedAckedWrites}, failed ${r.failed}; ` +
      `after Valkey returned: ${r.afterOutage.reads} reads (${r.afterOutage.hits} hits), stale ${r.afterOutage.staleTokenReads + r.afterOutage.missedAckedWrites}` +
      (r.firstFailure ? `; first failure: ${r.firstFailure}` : ""),
  );
  return [
    `result cache: the same point select, ${callers} callers, uncached and as cache hits (CPU: µs per request)`,
    ...table(["engine", "store", "network", "uncached req/s", "p50 ms", "hit req/s", "hit p50 ms", "hitThroughputRatio (range)", "hit p50 ÷ uncached", "uncached CPU", "hit CPU", "driver CPU/hit", "errors"], body),
    ...echo,
    ...ledger,
  ];
}

function cacheVerdict(cache: CacheResults): string {
  const met = cache.hits.filter((r) => r.hitThroughputRatio >= 5 && r.hitP50Ratio <= 1 / 3).length;
  const clean = cache.ledger.filter((r) => r.staleTokenReads === 0 && r.missedAckedWrites === 0 && r.failed === 0).length;
  return (
    `${met} of ${cache.hits.length} configurations meet both targets (hit throughput ≥ 5× uncached, hit p50 ≤ ⅓ uncached); ` +
    `ledger: ${clean} of ${cache.ledger.length} engines with 0 stale token reads, 0 missed acknowledged writes and 0 failed requests`
  );
}

function isolationTable(rows: IsolationRow[], callers: number): string[] {
  const base = rows[0];
  const body = rows.map((r) => [
    `${r.principals} principal${r.principals === 1 ? "" : "s"}`,
    num(r.throughput, 0),
    num(r.p50),
    num(r.p99),
    num(r.resetsPerRequest, 3),
    num(r.releaseResetsPerRequest, 3),
    num(r.cpuUsPerRequest, 0),
    r.errors === 0 ? "0" : num(r.errors, 0),
    base && r !== base ? edge(r.throughput, base.throughput, false) : "",
  ]);
  return [
    `clean sessions between principals: ${callers} callers spread over N principals (interleaved), point selects, PostgreSQL`,
    ...table(["principals", "req/s", "p50 ms", "p99 ms", "resets/req", "release resets/req", "CPU µs/req", "errors", "req/s ÷ 1 principal"], body),
  ];
}

function isolationVerdict(rows: IsolationRow[]): string {
  const one = rows[0];
  const most = rows.at(-1);
  if (!one || !most) return "no figures";
  const cost = 1 - most.throughput / one.throughput;
  return `one principal pays ${num(one.resetsPerRequest, 3)} resets per request (and ${num(one.releaseResetsPerRequest, 3)} lock releases); ${most.principals} interleaved principals pay ${num(most.resetsPerRequest, 3)} and keep ${num(100 * (1 - cost), 0)}% of the throughput`;
}

function topologyLines(results: BenchResults): string[] {
  const out: string[] = [];
  const rs = results.readScaling;
  if (rs && rs.length > 0) {
    const base = rs[0]?.throughput ?? Number.NaN;
    out.push("", `report 3: read scaling, point selects through the gateway, ${results.settings.callers} callers, primary + 0/1/2 streaming replicas on this machine`);
    out.push(...table(["replicas", "req/s", "p99 ms", "errors", "vs 0 replicas"], rs.map((r) => [String(r.replicas), num(r.throughput, 0), num(r.p99), String(r.errors), `${num(r.throughput / base, 2)}x`])));
    out.push(
      `=> ${rs.map((r) => `${r.replicas} replica(s) ${num(r.throughput, 0)} req/s`).join(", ")}, ${rs.reduce((a, r) => a + r.errors, 0)} errors. ` +
        `Every instance shares the same ${results.machine.cpus} cores here, so extra replicas cannot add capacity; on separate hosts each adds its own. ` +
        `(Report 3's proxy went from ${REFERENCE.readScaling.primaryTps} tps on the primary alone to ${REFERENCE.readScaling.twoReplicasTps} tps with 2 replicas.)`,
    );
  }
  for (const engine of results.failover ?? []) out.push(...failoverLines(engine));
  return out;
}

const ENGINE_SETUP = { postgres: "PostgreSQL, synchronous standby", mysql: "MariaDB, semi-synchronous replica" } as const;

const codesOf = (run: FailoverRunFigures) =>
  Object.entries(run.failedWritesByCode)
    .map(([code, count]) => `${code} ${count}`)
    .join(", ") || "none";

/** The failover runs of one engine: a row per run, the first run's timeline, and the verdict against the aims. */
function failoverLines(engine: FailoverEngineResult): string[] {
  const runs = engine.runs;
  const out = [
    "",
    `failovers under load (${ENGINE_SETUP[engine.engine]}): 10 writers and 10 readers through the gateway; kill -9 the primary, promote the standby once the gateway reports no primary; the old primary then rejoins as the standby`,
    "first run:",
    ...engine.timeline.map((line) => `  ${line}`),
  ];
  out.push(
    ...table(
      ["run", "writes back after monitor saw primary ms", "after promote returned ms", "read p99 before ms", "read p99 in failover ms", "ratio", "writes acked", "acked lost", "failed writes", "failed reads", "failovers"],
      runs.map((run, i) => [
        String(i + 1),
        num(run.resumedAfterSeenMs ?? undefined, 0),
        num(run.resumedAfterPromotionMs ?? undefined, 0),
        num(run.readP99BeforeMs, 1),
        num(run.readP99DuringMs, 1),
        `${num(run.readP99DuringMs / run.readP99BeforeMs, 2)}x`,
        num(run.acknowledgedWrites, 0),
        String(run.lostAcknowledgedWrites),
        codesOf(run),
        String(run.failedReads),
        String(run.failoversCounted),
      ]),
    ),
  );
  out.push(`=> ${failoverVerdict(engine)}`);
  return out;
}

/** One line per engine, against the aims: writes back within 100 ms of the monitor seeing the new primary, read p99 under twice. */
export function failoverVerdict(engine: FailoverEngineResult): string {
  const runs = engine.runs;
  const resumed = runs.map((run) => run.resumedAfterSeenMs).filter((ms): ms is number => ms !== null);
  const ratios = runs.map((run) => run.readP99DuringMs / run.readP99BeforeMs);
  const failed: Record<string, number> = {};
  for (const run of runs) for (const [code, count] of Object.entries(run.failedWritesByCode)) failed[code] = (failed[code] ?? 0) + count;
  const failedText = Object.entries(failed).map(([code, count]) => `${count} ${code}`).join(", ") || "none";
  return (
    `${runs.length} failovers: writes back ${num(Math.min(...resumed), 0)}–${num(Math.max(...resumed), 0)} ms after the monitor saw the new primary ` +
    `(aim under 100 ms: met in ${resumed.filter((ms) => ms < 100).length} of ${runs.length}); ` +
    `read p99 in the failover window ${num(Math.min(...ratios), 2)}–${num(Math.max(...ratios), 2)}x the p99 before (aim under 2x: met in ${ratios.filter((r) => r < 2).length} of ${runs.length}); ` +
    `acknowledged writes lost: ${runs.reduce((sum, run) => sum + run.lostAcknowledgedWrites, 0)}; failed writes: ${failedText}; ` +
    `failed reads: ${runs.reduce((sum, run) => sum + run.failedReads, 0)}; failovers recorded per run: ${runs.map((run) => run.failoversCounted).join(", ")}`
  );
}

/** Each setting's throughput and the gateway's CPU per request against tracing off. */
function tracingVerdict(rows: TargetRow[]): string {
  const off = poolgateOf(rows);
  if (!off) return "tracing off not measured";
  const pct = (value: number | undefined, base: number | undefined) => (value === undefined || base === undefined || base === 0 ? "n/a" : `${value >= base ? "+" : ""}${num(((value - base) / base) * 100, 1)}%`);
  return rows
    .filter((row) => row !== off)
    .map((row) => `${row.target}: throughput ${pct(row.throughput, off.throughput)}, gateway CPU per request ${pct(row.cpuUsPerRequest, off.cpuUsPerRequest)}`)
    .join("; ");
}

function throughputVerdict(rows: TargetRow[]): string {
  const ref = poolgateOf(rows);
  if (!ref) return "poolgate not measured";
  const alternatives = rows.filter((r) => r.role === "alternative").map((r) => `${edge(ref.throughput, r.throughput, false)} the ${r.target}`);
  const floor = rows.find((r) => r.role === "floor" && r.target !== HTTP_ALONE);
  return (
    `${ref.target} serves ${num(ref.throughput, 0)} req/s: ${alternatives.join(", ")}` +
    (floor ? `; ${num((ref.throughput / floor.throughput) * 100, 0)}% of the ${floor.target.replace(" (floor)", "")}, which pays no HTTP hop` : "")
  );
}

function burstVerdict(rows: TargetRow[]): string {
  const ref = poolgateOf(rows);
  if (!ref) return "poolgate not measured";
  // With every caller busy, the median wait is set by throughput (Little's law); a fair queue keeps the slowest close to it.
  const spread = (r: TargetRow) => `max ${num(r.max, 0)} ms = ${num(r.max / r.p50, 1)}x its p50`;
  const errors = (r: TargetRow) => (r.errorsAllRounds === 0 ? "no errors" : `${num(r.errorsAllRounds, 0)} errors`);
  const others = rows.filter((r) => r.role !== "poolgate").map((r) => `${r.target}: ${errors(r)}, ${spread(r)}`);
  const lines = [
    `${ref.target}: ${errors(ref)}, p99 ${num(ref.p99, 0)} ms, ${spread(ref)} ` +
      `(report 1's slowest: DBCP2 ${num(REFERENCE.burst.dbcp2MaxMs, 0)} ms, HikariCP ${REFERENCE.burst.hikariMaxMs} ms); ${others.join("; ")}`,
  ];
  // The slowest request against its floors: the in-process pool (no HTTP at all), and the same callers
  // against a server that does no work (what the HTTP hop alone costs this burst on this machine).
  const inProcess = rows.find((r) => r.role === "floor" && r.target !== HTTP_ALONE);
  const httpAlone = rows.find((r) => r.target === HTTP_ALONE);
  if (inProcess?.max && ref.max) {
    const vsHttp = httpAlone?.max ? `, and ${num(ref.max / httpAlone.max, 2)}x the ${httpAlone.target}'s max (${num(httpAlone.max, 0)} ms, ${num(httpAlone.max / inProcess.max, 1)}x the in-process floor's by itself)` : "";
    lines.push(`slowest request: ${num(ref.max / inProcess.max, 2)}x the ${inProcess.target}'s max (${num(inProcess.max, 0)} ms; aim at most 2.5x)${vsHttp}`);
  }
  // Where the slowest requests are: the first wave (every caller at once, connections opening) or later.
  const waves = [ref, httpAlone].filter((r): r is TargetRow => r?.firstRequestMax !== undefined && r.laterRequestMax !== undefined);
  if (waves.length > 0) {
    lines.push(`slowest of the callers' first requests (sent together as the driver opens its connections) / of the rest: ${waves.map((r) => `${r.target} ${num(r.firstRequestMax as number, 0)} / ${num(r.laterRequestMax as number, 0)} ms`).join("; ")}`);
  }
  return lines.join("\n=> ");
}

/** The gateway's insert as its parts: the HTTP round trip, the database's (insert and its position, through the gateway's engine), and the rest, the gateway's own. */
function insertBreakdown(rows: InsertRow[], ref: InsertRow): string {
  const http = rows.find((r) => r.target === INSERT_PARTS.http);
  const database = rows.find((r) => r.target === INSERT_PARTS.database);
  if (!http || !database) return "";
  const own = ref.perInsertUs - http.perInsertUs - database.perInsertUs;
  return `breakdown of ${num(ref.perInsertUs, 0)} µs: HTTP round trip ${num(http.perInsertUs, 0)} + database (the gateway's engine in-process: the insert and its token's WAL position, one round trip) ${num(database.perInsertUs, 0)} + the gateway's own ${num(own, 0)} µs`;
}

function insertsVerdict(rows: InsertRow[]): string {
  const ref = poolgateOf(rows);
  if (!ref) return "poolgate not measured";
  const newConnection = rows.find((r) => r.target.toLowerCase().startsWith("new connection"));
  const floor = rows.find((r) => r.role === "floor");
  const pooledBouncer = rows.find((r) => r.target.startsWith("PgBouncer") && r.target.includes("pooled"));
  return [
    `${ref.target}: ${num(ref.totalMs / 1000, 1)} s for ${num(ref.count, 0)} (${num(ref.perInsertUs, 0)} µs each)`,
    newConnection ? `${edge(ref.perInsertUs, newConnection.perInsertUs, true)} faster than a new connection each (~${num(newConnection.totalMs / 1000, 0)} s, extrapolated; report 4: ${num(REFERENCE.inserts.newConnectionMs / 1000, 0)} s)` : "",
    floor ? `the HTTP hop costs ${num(ref.perInsertUs - floor.perInsertUs, 0)} µs per insert over the ${floor.target} (${num(floor.perInsertUs, 0)} µs; report 4's HikariCP: ${num((REFERENCE.inserts.hikariMs * 1000) / REFERENCE.inserts.count, 1)} µs on an embedded database)` : "",
    insertBreakdown(rows, ref),
    pooledBouncer ? `${num(ref.perInsertUs / pooledBouncer.perInsertUs, 2)}x PgBouncer's pooled client (${num(pooledBouncer.perInsertUs, 0)} µs)` : "",
  ]
    .filter(Boolean)
    .join("; ");
}

function conflictsVerdict(rows: ConflictRow[]): string {
  const gateway = poolgateOf(rows);
  const immediate = rows.filter((r) => r.target.includes("at once"));
  const allRight = rows.every((r) => r.failed === 0 && r.wrongFinalValues === 0);
  if (!gateway) return "poolgate not measured";
  return (
    `${allRight ? "every round of every target ended at exactly the number of increments" : "SOME ROUNDS ENDED WRONG (see the table)"}; ` +
    `the gateway's backoff took ${num(gateway.meanRetries, 1)} retries per round (max ${gateway.maxRetries}) and ${num(gateway.medianMs, 0)} ms; ` +
    immediate.map((r) => `${r.target}: ${num(r.meanRetries, 1)} retries (max ${r.maxRetries}), ${num(r.medianMs, 0)} ms`).join("; ") +
    ` (report 2: backoff about half the retries for a few % more time)`
  );
}

const signed = (value: number): string => `${value >= 0 ? "+" : "-"}${num(Math.abs(value), 0)}`;

/** The simulated machine's misses per request, both servers side by side (main thread). */
function missLines(gateway: SimulatedMisses, naive: SimulatedMisses): string[] {
  const line = (label: string, ours: number, theirs: number) =>
    `    ${label}: poolgate ${num(ours, 0)}, naive forwarder ${num(theirs, 0)}${theirs > 0 ? `: ${(ours / theirs).toFixed(2)}x` : ""}`;
  return [
    "  misses per request in callgrind's simulated first-level caches and branch predictor (main thread):",
    line("instruction cache", gateway.instructionCache, naive.instructionCache),
    line("data cache, reads", gateway.dataReads, naive.dataReads),
    line("data cache, writes", gateway.dataWrites, naive.dataWrites),
    line("conditional branches mispredicted", gateway.conditionalBranches, naive.conditionalBranches),
    line("indirect branches mispredicted", gateway.indirectBranches, naive.indirectBranches),
  ];
}

/** The ledger's report: per engine, both servers' instructions per request, the ratio, and where the gateway's main thread spends more. */
export function ledgerLines(ledgers: readonly InstructionLedger[]): string[] {
  const out: string[] = [];
  for (const engine of ["postgres", "mysql"] as const) {
    const gateway = ledgers.find((l) => l.engine === engine && l.server === "gateway");
    const naive = ledgers.find((l) => l.engine === engine && l.server === "naive");
    if (!gateway || !naive) continue;
    const { callers, warmupRequests, windows, windowRequests, windowsKept } = LEDGER_SHAPE;
    out.push(
      "",
      `instruction ledger, ${engine === "postgres" ? "PostgreSQL" : "MariaDB"}: instructions per point select under callgrind (${callers} callers; ${num(warmupRequests, 0)} requests of warm-up, then ${windows} windows of ${num(windowRequests, 0)}; median of the last ${windowsKept})`,
      `  main thread: poolgate ${num(gateway.mainPerRequest, 0)}, naive forwarder ${num(naive.mainPerRequest, 0)}: ${(gateway.mainPerRequest / naive.mainPerRequest).toFixed(3)}x (target: <= 1)`,
      `  all threads: poolgate ${num(gateway.allThreadsPerRequest, 0)}, naive forwarder ${num(naive.allThreadsPerRequest, 0)}: ${(gateway.allThreadsPerRequest / naive.allThreadsPerRequest).toFixed(3)}x`,
      `  main thread by window: poolgate ${gateway.windows.map((w) => num(w.mainPerRequest, 0)).join(" ")}; naive ${naive.windows.map((w) => num(w.mainPerRequest, 0)).join(" ")}`,
    );
    out.push(...missLines(gateway.misses, naive.misses));
    if (gateway.errors + naive.errors > 0) out.push(`  errors: poolgate ${gateway.errors}, naive ${naive.errors}`);
    const naiveBy = new Map(naive.functions.map((f) => [f.name, f.perRequest]));
    const gatewayBy = new Map(gateway.functions.map((f) => [f.name, f.perRequest]));
    const differences = [...new Set([...naiveBy.keys(), ...gatewayBy.keys()])].map((name) => ({ name, more: (gatewayBy.get(name) ?? 0) - (naiveBy.get(name) ?? 0) }));
    differences.sort((a, b) => b.more - a.more);
    const label = (d: { name: string; more: number }) => `${signed(d.more)} ${d.name.length > 90 ? `${d.name.slice(0, 87)}...` : d.name}`;
    out.push("  where poolgate's main thread spends more than the naive forwarder's (instructions per request, the window of the median):");
    out.push(...differences.slice(0, 15).map((d) => `    ${label(d)}`));
    out.push("  and less:", ...differences.slice(-5).reverse().map((d) => `    ${label(d)}`));
    out.push(`  callgrind files of that window, and the perf map naming their generated code: ${gateway.dir}, ${naive.dir}`);
  }
  return out;
}
