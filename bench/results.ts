/**
 * What one `npm run bench` measured: the shape of bench-results/bench.json, read by the tables
 * (report.ts) and the chart (figure.ts). Milliseconds unless a name says otherwise.
 */
import type { AuroraFailoverFigures } from "../test/support/aurora-failover-load.js";
import type { CacheLedger } from "../test/support/cache-ledger.js";
import type { InstructionLedger } from "./instructions-bench.js";
import type { ProfiledServer } from "./profile-bench.js";
import type { DriverResult } from "./workload.js";

/** The floor for targets behind HTTP (steady load and report 1): the same callers against a server that answers without a database. */
export const HTTP_ALONE = "HTTP alone (echo server, no database)";

/** The forwarders whose clients pipeline statements on their connections (naive-server.ts), per engine. */
export const PIPELINED_FORWARDER = { postgres: "pipelining HTTP + postgres.js", mysql: "pipelining HTTP + MariaDB connector" } as const;

/** One target's figures for one scenario: the median round, with errors and requests over all rounds. */
export interface TargetRow extends DriverResult {
  target: string;
  /** Poolgate itself, an alternative, or the in-process floor (ratios are taken against `poolgate`). */
  role: "poolgate" | "alternative" | "floor";
  rounds: number;
  requestsAllRounds: number;
  errorsAllRounds: number;
  /** CPU of the process that serves the requests (the gateway, the naive server, the in-process pool), all its threads. */
  cpuUsPerRequest?: number;
  /** The same CPU read as the sum of /proc/<pid>/task/<tid>/stat over the threads alive at the end (a cross-check). */
  cpuUsPerRequestByThreads?: number;
  /** The HTTP load driver's own CPU per request (absent where the serving process drives itself). */
  driverCpuUsPerRequest?: number;
  /** The database servers' CPU per request (every postgres and mariadbd process, with the children they reaped). */
  databaseCpuUsPerRequest?: number;
  /** Poolgate's edge over this target, round by round (throughput ratio, or p99 ratio for bursts): median and range. */
  ratioToPoolgate?: { median: number; min: number; max: number };
}

export interface InsertRow {
  target: string;
  role: TargetRow["role"];
  /** Inserts actually run. */
  ran: number;
  /** Inserts the total is given for (the scenario's count); above `ran` when extrapolated. */
  count: number;
  extrapolated: boolean;
  totalMs: number;
  perInsertUs: number;
  errors: number;
  firstError?: string;
}

export interface ConflictRow {
  target: string;
  role: TargetRow["role"];
  rounds: number;
  /** Median over rounds of the time for all concurrent increments to finish. */
  medianMs: number;
  p90Ms: number;
  meanRetries: number;
  maxRetries: number;
  /** Rounds whose final value was not the number of increments (should be none). */
  wrongFinalValues: number;
  /** Increments that failed for good (retries exhausted). */
  failed: number;
  firstError?: string;
}

export interface ReadScalingRow {
  replicas: number;
  throughput: number;
  p99: number;
  errors: number;
}

/** One failover under load (kill the primary, promote the standby). */
export interface FailoverRunFigures {
  /** First write acknowledged after the gateway's monitor saw the new primary (aim: under 100 ms). */
  resumedAfterSeenMs: number | null;
  /** First write acknowledged after the promotion command returned (negative: before it returned). */
  resumedAfterPromotionMs: number | null;
  /** When the monitor saw the new primary, from the promotion command's return. */
  primarySeenAfterPromotionMs: number | null;
  /** Read p99 in the 2 s before the kill, and from the kill to the end of the run (aim: under twice). */
  readP99BeforeMs: number;
  readP99DuringMs: number;
  acknowledgedWrites: number;
  lostAcknowledgedWrites: number;
  failedReads: number;
  failedWritesByCode: Record<string, number>;
  /** Failovers the gateway recorded in the run (one expected). */
  failoversCounted: number;
}

export interface FailoverEngineResult {
  engine: "postgres" | "mysql";
  runs: FailoverRunFigures[];
  /** The first run's events, in ms from the kill. */
  timeline: string[];
}

/** The steady load with its callers spread over several principals, each principal's sessions reset before another's work. */
export interface IsolationRow {
  principals: number;
  throughput: number;
  p50: number;
  p99: number;
  /** Full session resets (DISCARD ALL) per request. */
  resetsPerRequest: number;
  /** Resets as sessions came back from their callers per request: the session-lock release (pg_advisory_unlock_all) after any statement, a rollback, or a full reset. */
  releaseResetsPerRequest: number;
  cpuUsPerRequest: number;
  errors: number;
  firstError?: string | undefined;
}

/** The cache part: the same read through the gateway without and with the result cache (every call a hit). */
export interface CacheRow {
  engine: "postgres" | "mysql";
  store: "memory" | "valkey";
  /** "loopback", or the simulated network's added round trip to the database ("+1 ms"). */
  network: string;
  uncachedThroughput: number;
  uncachedP50: number;
  hitThroughput: number;
  hitP50: number;
  /** Hit throughput ÷ uncached throughput (target ≥ 5). */
  hitThroughputRatio: number;
  /** Hit p50 ÷ uncached p50 (target ≤ 1/3). */
  hitP50Ratio: number;
  /** The lowest and highest hit round against the uncached median. */
  hitRatioRange: [number, number];
  /** The gateway's CPU (every thread, /proc) per request: uncached, and hits. */
  uncachedServerCpuUsPerRequest: number;
  hitServerCpuUsPerRequest: number;
  /** The load driver's CPU per hit: on one machine it shares the cores with the gateway. */
  hitDriverCpuUsPerRequest: number;
  errors: number;
  firstError?: string | undefined;
}

/** The echo server (HTTP alone, no database) under the cache part's driver: what no hit can go under here. */
export interface CacheHttpAlone {
  throughput: number;
  p50: number;
  serverCpuUsPerRequest: number;
  driverCpuUsPerRequest: number;
}

/** The correctness ledger on one engine (test/support/cache-ledger.ts): two gateway processes, one Valkey. */
export type CacheLedgerRow = CacheLedger & { engine: "postgres" | "mysql"; seconds: number };

export interface CacheResults {
  hits: CacheRow[];
  httpAlone?: CacheHttpAlone;
  ledger: CacheLedgerRow[];
}

/** One read of the streaming part: a buffered /v1/query or a stream, with the gateway's memory over it. */
export interface StreamingRow {
  engine: string;
  read: string;
  rows: number;
  /** What the caller received (NDJSON or JSON text). */
  megabytes: number;
  seconds: number;
  rowsPerSecond: number;
  megabytesPerSecond: number;
  /** The gateway's VmRSS just before the read, its peak during it, and at each tenth of its time (MiB). */
  rssBeforeMiB: number;
  rssPeakMiB: number;
  rssTenthsMiB: number[];
}

/** One driver of the client part: what installing it and a cold start with it cost (bench/client-bench.ts). */
export interface ClientRow {
  driver: string;
  /** node_modules after installing it alone into an empty project. */
  installedKiB: number;
  /** A handler that runs one query, bundled by esbuild as minified ESM. */
  bundleKiB: number;
  /** Median, in a fresh Node process: from before the import to the first query's rows. */
  importAndFirstQueryMs: number;
  /** Median wall time of that whole process, Node's own start-up included. */
  processMs: number;
}

export interface BenchResults {
  startedAt: string;
  finishedAt?: string;
  durationMs?: number;
  machine: {
    cpus: number;
    node: string;
    postgres?: string;
    mariadb?: string;
    pgbouncer?: string;
    /** 1-minute load average before and after the run: other work on the machine skews every figure. */
    loadBefore: number;
    loadAfter?: number;
  };
  settings: Record<string, number | string>;
  throughput?: { postgres?: TargetRow[]; mysql?: TargetRow[] };
  burst?: { postgres?: TargetRow[]; mysql?: TargetRow[] };
  inserts?: InsertRow[];
  conflicts?: ConflictRow[];
  readScaling?: ReadScalingRow[];
  failover?: FailoverEngineResult[];
  isolation?: IsolationRow[];
  /** Issue 38: the result cache's hits against uncached reads, and its correctness ledger. */
  cache?: CacheResults;
  /** What tracing and insights cost: the PostgreSQL steady load against gateways with tracing off, on at 1% and 100% sampling, and insights on. */
  tracing?: TargetRow[];
  /** `--profile`: where the gateway's and the naive forwarder's CPU went under the steady load. */
  profiles?: ProfiledServer[];
  /** POOLGATE_BENCH_ONLY=instructions: instructions per request under callgrind, the gateway's and the naive forwarder's. */
  instructions?: InstructionLedger[];
  streaming?: StreamingRow[];
  /** Issue 34: token reads on the Aurora stand-ins, and an Aurora-style failover (its row has `scenario: "failover"`). */
  aurora?: (AuroraRow | AuroraFailoverRow)[];
  /** Issue 35: the gateway across an Aurora cluster's life; each lifecycle function fills its own figures. */
  lifecycle?: LifecycleFigures;
  /** The client part: @poolgate/client beside @neondatabase/serverless and @planetscale/database. */
  client?: ClientRow[];
  /** Targets or scenarios left out, and why. */
  notes: string[];
  /** Parts that failed, with the error: the rest is still printed and saved. */
  failures: string[];
}

/** An Aurora-style failover under load on an Aurora stand-in (bench/aurora-failover-bench.ts): its set-up, and its figures (test/support/aurora-failover-load.ts). */
export interface AuroraFailoverRow extends AuroraFailoverFigures {
  scenario: "failover";
  engine: "postgres" | "mysql";
  writers: number;
  /** Callers sending plain reads. */
  readers: number;
  /** Callers sending slow maxStalenessMs 0 reads (on the writer when it dies). */
  freshReaders: number;
  oldWriterBackAfterMs: number;
  namesMoveAfterMs: number;
  writes: number;
  reads: number;
}

export function isAuroraFailoverRow(row: AuroraRow | AuroraFailoverRow): row is AuroraFailoverRow {
  return "scenario" in row && row.scenario === "failover";
}

/** An idle cluster's database paused and resumed (pausing-instance stand-in), per engine and per answer to a paused connect. */
export interface ResumeRow {
  engine: "postgres" | "mysql";
  whilePaused: "hold" | "refuse";
  /** The stand-in's resume time. */
  standInResumeMs: number;
  /** Requests that arrived at once after the pause, each with a deadline longer than the resume. */
  callers: number;
  /** How long the first of them waited for its answer. */
  resumeHeldMs: number;
  /** How many of them failed (target: 0). */
  failedDuringResume: number;
}

/** An idle cluster's database paused and resumed (bench/lifecycle-bench.ts). */
export interface ResumeFigures {
  /** The longest resumeHeldMs of the rows. */
  resumeHeldMs: number;
  /** Failed requests over every row. */
  failedDuringResume: number;
  resume: ResumeRow[];
}

/** Writers reading their own writes with the consistency token on an Aurora stand-in under real apply lag. */
export interface AuroraRow {
  engine: "postgres" | "mysql";
  lagMs: number;
  tokenWaitMs: number;
  tokenReads: number;
  /** Token reads a reader served, of all token reads. */
  tokenReadsOnReplicasPct: number;
  /** Token reads that did not see the write their token names. */
  staleReads: number;
  errors: number;
}

/** Issue 35's `lifecycle` figures: each kind of event's function (runSwitchoverBench, ...) adds its own. */
export type LifecycleFigures = Partial<SwitchoverFigures & ResumeFigures>;

/** A Blue/Green switchover of one engine's Aurora stand-in under load (bench/switchover-bench.ts). */
export interface SwitchoverRow {
  engine: "postgres" | "mysql";
  /** Requests sent after the switchover dropped the sessions that failed (target 0). */
  failedDuringSwitchover: number;
  /** Requests in flight when the sessions were dropped that failed (a cut write is not retried blindly). */
  failedInFlightAtSwitchover: number;
  /** From the switchover's end (green under blue's names, connections allowed) to the first write completed (target <= 1000). */
  writesBackAfterSwitchoverMs: number;
  /** The stand-in's switchover, from the drop to its end: the time writes were blocked. */
  switchoverMs: number;
}

/** The switchover on every engine's stand-in: the figures are the worst (sums of failures, the longest times) over the rows. */
export interface SwitchoverFigures extends Omit<SwitchoverRow, "engine"> {
  switchover: SwitchoverRow[];
}
