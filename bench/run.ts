/**
 * `npm run bench`: the comparison to read before adopting Poolgate, on this machine, in one run.
 * The gateway (native API and Data API over HTTP keep-alive) against a new connection per request,
 * PgBouncer in transaction mode with a new client connection per request, a naive HTTP server on a
 * pool, and the in-process pool floor, through the scenarios of the five field reports
 * (/work/shared/reference/seed-scenarios.md):
 *   throughput  steady load: concurrent point selects (PostgreSQL)
 *   burst       report 1: 750 callers on a pool of 10 — p50/p90/p99/max and errors
 *   inserts     report 4: 100,000 sequential inserts, pooled vs a new connection each (sampled, extrapolated)
 *   conflicts   report 2: ten concurrent serializable increments of one row, gateway backoff vs immediate retry
 *   mysql       steady load and report 1 on the local MariaDB through the MySQL engine
 *   topology    report 3: read scaling with 0/1/2 streaming replicas; several failovers per engine under load
 *   isolation   the steady load spread over 1, 2 and 20 principals: what clean sessions between them cost
 *   cache       the same read uncached and as result-cache hits (memory store and a real redis-server), both
 *               engines, on loopback and with the database 1 ms further away: hit throughput and p50 against
 *               the uncached read, beside HTTP alone; and the correctness ledger (two gateways sharing a
 *               redis-server stopped and started mid-run: stale token reads, missed acknowledged writes)
 *   profile     (only with `--profile`) the steady load on each engine against the gateway and the naive
 *               forwarder under `node --cpu-prof`: where each one's CPU goes, by area
 *   instructions  (only when named) the instruction ledger: the steady load's point select against the
 *               gateway and the naive forwarder under valgrind's callgrind, instructions per request
 *               (noise-free where CPU seconds are not) and where the gateway's exceed the forwarder's
 *   aurora      issue 34: writers reading their own writes with the token on the Aurora PostgreSQL and MySQL stand-ins
 *               (PostgreSQL at 20 ms of real lag): token reads served by readers (%) and stale reads; and an
 *               Aurora-style failover under load on each stand-in (writesBackMs, failedReads, lostWrites,
 *               readsOnReaderAfterPct)
 *   lifecycle   issue 35: a Blue/Green switchover of the Aurora PostgreSQL and MySQL stand-ins under load:
 *               requests failed during it, how soon writes are back after it (per engine); and an idle cluster (idleToZero) whose
 *               database paused (pausing-instance stand-in, both engines, connects held or refused):
 *               resumeHeldMs (the first caller's wait) and failedDuringResume
 *   streaming   reads of any size: 10 million rows streamed through the gateway beside the largest buffered
 *               /v1/query result, the gateway's resident memory over time and the throughput (both engines)
 *   client      what @poolgate/client costs a Lambda beside @neondatabase/serverless and @planetscale/database:
 *               installed size, a querying handler's minified ESM bundle, import-and-first-query time of a
 *               fresh Node process (bench/client-bench.ts)
 * A progress bar runs on stderr; the tables and verdicts go to stdout; the figure and the raw
 * figures are saved as <out>/bench.svg and <out>/bench.json. Not a test: no assertions.
 *
 * Environment (defaults in parentheses):
 *   POOLGATE_BENCH_ONLY            comma-separated parts to run: throughput, burst, inserts, conflicts,
 *                                  mysql, topology, isolation, cache, streaming, aurora, lifecycle, client, tracing, profile, instructions, or postgres
 *                                  (= the first four) (all but profile and instructions; `--profile` alone
 *                                  runs just the profile)
 *   POOLGATE_BENCH_PROFILE=1       the same as `--profile`
 *   POOLGATE_BENCH_POOL            pool size of every target (10)
 *   POOLGATE_BENCH_ROUNDS          interleaved rounds per measurement, median kept (3)
 *   POOLGATE_BENCH_MAX_ROUNDS      more rounds, up to this many, until poolgate's ratios are stable (7)
 *   POOLGATE_BENCH_STABLE_PCT      stable: one more round moves no ratio's median by more than this % (3)
 *   POOLGATE_BENCH_CALLERS         steady-load and read-scaling callers (32)
 *   POOLGATE_BENCH_DURATION_MS     steady-load and read-scaling run length (2000)
 *   POOLGATE_BENCH_WARMUP_MS       warm-up before each steady-load run (1000)
 *   POOLGATE_BENCH_SERVER_WARMUP_MS  before an HTTP server's first measured run, the same load unmeasured
 *                                  until its JIT has settled (5000; 0: none)
 *   POOLGATE_BENCH_BURST_CALLERS   report 1 callers (750)
 *   POOLGATE_BENCH_BURST_REQUESTS  report 1 requests per caller (4)
 *   POOLGATE_BENCH_INSERTS         report 4 inserts for pooled targets (100000)
 *   POOLGATE_BENCH_INSERTS_SAMPLE  report 4 inserts for new-connection targets, extrapolated (2000)
 *   POOLGATE_BENCH_CONFLICT_CALLERS / _ROUNDS  report 2 increments per round (10) and rounds (20)
 *   POOLGATE_BENCH_FAILOVERS       failovers in a row per engine (3)
 *   POOLGATE_BENCH_CACHE_DELAY_MS  the cache part's simulated network: ms added to each database round trip (1; 0: none)
 *   POOLGATE_BENCH_STREAM_ROWS     rows of the long stream, per engine (10000000)
 *   POOLGATE_BENCH_ADMIN_URL, POOLGATE_BENCH_MYSQL_URL  the servers (the local PostgreSQL and MariaDB)
 *   POOLGATE_BENCH_PGBOUNCER       the pgbouncer binary (/usr/sbin/pgbouncer, else PATH; absent: left out)
 *   POOLGATE_BENCH_OUT             where bench.svg and bench.json go (bench-results)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { Pool } from "undici";
import { callerRetriesAtOnce, type ConflictTarget, fullJitter, gatewayRetries, inProcessRetries, runConflicts } from "./conflicts.js";
import { benchUrlOf, prepareMysql, preparePostgres } from "./databases.js";
import { estimate } from "./estimates.js";
import { renderBenchFigure } from "./figure.js";
import { INSERT_PARTS, runInserts } from "./inserts.js";
import { findPgBouncer, type PgBouncer, startPgBouncer } from "./pgbouncer.js";
import { cleanupAll, exitCleanlyOnSignals, type Server, startGateway, startServer } from "./processes.js";
import { Progress } from "./progress.js";
import { reportLines } from "./report.js";
import { startOtlpReceiver } from "../test/support/otlp-receiver.js";
import { type BenchResults, HTTP_ALONE, PIPELINED_FORWARDER } from "./results.js";
import { POSTGRES_PARTS, settings as S } from "./settings.js";
import { directTarget, httpTarget, measureRounds, sdkTarget, type Target, type TargetResult, type Work } from "./targets.js";

const progress = new Progress();
const results: BenchResults = {
  startedAt: new Date().toISOString(),
  machine: { cpus: cpus().length, node: process.version, loadBefore: loadavg()[0] ?? 0 },
  settings: {
    poolSize: S.poolSize,
    rounds: S.rounds,
    callers: S.callers,
    durationMs: S.durationMs,
    warmupMs: S.warmupMs,
    burstCallers: S.burstCallers,
    burstRequests: S.burstRequests,
    inserts: S.inserts,
    insertSample: S.insertSample,
    conflictCallers: S.conflictCallers,
    conflictRounds: S.conflictRounds,
    failovers: S.failovers,
    streamRows: S.streamRows,
    only: [...S.only].join(","),
  },
  notes: [],
  failures: [],
};

const step = <T>(label: string, estimateS: number, work: () => Promise<T>) => progress.step(label, estimateS, work);
const roundStep = (perRun: (name: string) => number) => (label: string, run: () => Promise<TargetResult>) =>
  step(label, perRun(label), run);

const steadyWork = (dialect: Work["dialect"]): Work => ({ statement: "point", dialect, callers: S.callers, durationMs: S.durationMs, warmupMs: S.warmupMs, serverWarmupMs: S.serverWarmupMs });
const burstWork = (dialect: Work["dialect"]): Work => ({ statement: "point", dialect, callers: S.burstCallers, requestsPerCaller: S.burstRequests, warmupMs: S.warmupMs, serverWarmupMs: S.serverWarmupMs });
/**
 * The floor for anything behind HTTP: the same callers against a server that answers without a
 * database. In the steady load, its CPU in all is what HTTP costs before any database work; in report 1,
 * its slowest request is the burst's cost on this machine before any pool is involved (the driver
 * opening its connections, the kernel's accept queue, one event loop reading every request).
 */
const httpAlone = (echo: Server) => httpTarget(HTTP_ALONE, "floor", echo);
const gatewayConfig = (url: string, extra: object = {}) => ({ clusters: { default: { writerUrl: url } }, pool: { maxSize: S.poolSize }, ...extra });

async function maybePgBouncer(benchUrl: string): Promise<PgBouncer | undefined> {
  const binary = findPgBouncer(S.pgbouncerBinary);
  if (!binary) {
    results.notes.push("PgBouncer: not installed, left out (`apt-get install pgbouncer` to include it)");
    return undefined;
  }
  const bouncer = await startPgBouncer({ binary, backendUrl: benchUrl, poolSize: S.poolSize, maxClients: S.burstCallers + 100 });
  results.machine.pgbouncer = bouncer.version;
  return bouncer;
}

async function postgresPart(): Promise<void> {
  progress.setPhase("PostgreSQL");
  const benchUrl = benchUrlOf(S.adminUrl);
  const servers: { stop(): Promise<void> }[] = [];
  try {
    const { gateway, naive, pipelined, bouncer, echo } = await step("seeding, starting the gateway, the naive servers, PgBouncer and an echo server", 5, async () => {
      results.machine.postgres = await preparePostgres(S.adminUrl);
      const gateway = await startGateway(gatewayConfig(benchUrl));
      servers.push(gateway);
      const naive = await startServer("./naive-server.js", ["pool", benchUrl, String(S.poolSize)], {}, /^(\d+)\n/);
      servers.push(naive);
      const pipelined = await startServer("./naive-server.js", ["postgres-js", benchUrl, String(S.poolSize)], {}, /^(\d+)\n/);
      servers.push(pipelined);
      const bouncer = await maybePgBouncer(benchUrl);
      if (bouncer) servers.push(bouncer);
      const echo = await startServer("./naive-server.js", ["echo", "-", "0"], {}, /^(\d+)\n/);
      servers.push(echo);
      return { gateway, naive, pipelined, bouncer, echo };
    });
    const native = httpTarget("poolgate native (HTTP)", "poolgate", gateway);
    const dataApi = httpTarget("poolgate Data API (HTTP)", "poolgate", gateway, "data-api");
    const neonDoor = httpTarget("poolgate Neon /sql (HTTP)", "poolgate", gateway, "neon");
    const inProcess = directTarget("in-process pg.Pool (floor)", "floor", benchUrl, "pool", S.poolSize);
    const newConnection = directTarget("new connection per request", "alternative", benchUrl, "per-request", S.poolSize);
    const bouncerNew = bouncer ? [directTarget("PgBouncer txn, new conn/request", "alternative", bouncer.url, "per-request", S.poolSize)] : [];

    if (S.only.has("throughput")) {
      progress.setPhase("PostgreSQL steady load");
      // What query insights cost (docs/insights.md): the same gateway with them on, beside the one with them off.
      const insightsOn = await startGateway(gatewayConfig(benchUrl, { insights: { enabled: true } }));
      servers.push(insightsOn);
      const targets = [
        native,
        httpTarget("poolgate native, insights on (HTTP)", "poolgate", insightsOn),
        dataApi,
        neonDoor,
        sdkTarget("poolgate Data API (AWS SDK)", gateway),
        inProcess,
        httpAlone(echo),
        httpTarget("naive HTTP + pg.Pool", "alternative", naive),
        httpTarget(PIPELINED_FORWARDER.postgres, "alternative", pipelined),
        newConnection,
        ...bouncerNew,
      ];
      results.throughput = { ...results.throughput, postgres: await measureRounds(targets, steadyWork("postgres"), S.rounds, "throughput", roundStep(() => estimate.steadyRunS()), S.stability) };
    }
    if (S.only.has("burst")) {
      progress.setPhase(`report 1 (${S.burstCallers} callers)`);
      const targets = [native, dataApi, neonDoor, inProcess, httpAlone(echo), httpTarget("naive HTTP + pg.Pool", "alternative", naive), newConnection, ...bouncerNew];
      results.burst = { ...results.burst, postgres: await measureRounds(targets, burstWork("postgres"), S.rounds, "p99", roundStep(estimate.burstRunS), S.stability) };
    }
    if (S.only.has("inserts")) {
      progress.setPhase("report 4 (sequential inserts)");
      const full = S.inserts;
      const sample = S.insertSample;
      // The breakdown of the gateway's insert: the HTTP round trip alone, and the database's part (the
      // insert with the WAL position its consistency token carries, through the gateway's own engine on one session).
      const plans = [
        { target: native, run: full },
        { target: inProcess, run: full },
        { target: httpTarget(INSERT_PARTS.http, "floor", echo), run: Math.max(sample, Math.min(full, 20000)) },
        { target: directTarget(INSERT_PARTS.database, "floor", benchUrl, "gateway-engine", 1), run: Math.max(sample, Math.min(full, 20000)) },
        ...(bouncer ? [{ target: directTarget("PgBouncer txn, pooled client", "alternative", bouncer.url, "pool", 1), run: full }] : []),
        { target: directTarget("new connection per insert", "alternative", benchUrl, "per-request", 1), run: sample },
        ...(bouncer ? [{ target: directTarget("PgBouncer txn, new conn/insert", "alternative", bouncer.url, "per-request", 1), run: sample }] : []),
      ];
      results.inserts = await runInserts(plans, full, benchUrl, step, (plan) => estimate.insertsS(plan.target.name, plan.run));
    }
    if (S.only.has("conflicts")) {
      progress.setPhase(`report 2 (${S.conflictCallers} concurrent increments)`);
      const noRetries = await startGateway(gatewayConfig(benchUrl, { retry: { maxAttempts: 1 } }));
      servers.push(noRetries);
      results.conflicts = await conflictsWith(gateway, noRetries, benchUrl);
    }
  } finally {
    for (const server of servers.reverse()) await server.stop();
  }
}

async function conflictsWith(gateway: Server, noRetries: Server, benchUrl: string) {
  const http = new Pool(gateway.url, { connections: S.conflictCallers });
  const httpNoRetries = new Pool(noRetries.url, { connections: S.conflictCallers });
  const pool = new pg.Pool({ connectionString: benchUrl, max: S.poolSize });
  const admin = new pg.Pool({ connectionString: benchUrl, max: 1 });
  try {
    const targets: ConflictTarget[] = [
      { name: "poolgate, gateway retries w/ backoff", role: "poolgate", increment: gatewayRetries(http) },
      { name: "poolgate, caller retries at once", role: "alternative", increment: callerRetriesAtOnce(httpNoRetries) },
      { name: "pg.Pool, caller retries at once", role: "alternative", increment: inProcessRetries(pool, () => 0) },
      // The gateway's defaults (retry.baseDelayMs 10, retry.maxDelayMs 1000), in the caller.
      { name: "pg.Pool, caller full-jitter backoff", role: "alternative", increment: inProcessRetries(pool, fullJitter(10, 1000)) },
      { name: "serial, no conflicts (poolgate)", role: "floor", increment: gatewayRetries(http), serial: true },
    ];
    return await runConflicts(targets, S.conflictCallers, S.conflictRounds, admin, (label, work) => step(label, estimate.conflictRoundS(), work));
  } finally {
    await Promise.all([http.close(), httpNoRetries.close(), pool.end(), admin.end()]);
  }
}

async function mysqlPart(): Promise<void> {
  progress.setPhase("MariaDB");
  const benchUrl = benchUrlOf(S.mysqlAdminUrl);
  const servers: Server[] = [];
  try {
    const { gateway, naive, pipelined, echo } = await step("seeding, starting the gateway, the naive servers and an echo server", 4, async () => {
      results.machine.mariadb = await prepareMysql(S.mysqlAdminUrl);
      const gateway = await startGateway(gatewayConfig(benchUrl));
      servers.push(gateway);
      const naive = await startServer("./naive-server.js", ["mysql-pool", benchUrl, String(S.poolSize)], {}, /^(\d+)\n/);
      servers.push(naive);
      const pipelined = await startServer("./naive-server.js", ["mariadb-pool", benchUrl, String(S.poolSize)], {}, /^(\d+)\n/);
      servers.push(pipelined);
      const echo = await startServer("./naive-server.js", ["echo", "-", "0"], {}, /^(\d+)\n/);
      servers.push(echo);
      return { gateway, naive, pipelined, echo };
    });
    const native = httpTarget("poolgate native (HTTP)", "poolgate", gateway);
    const dataApi = httpTarget("poolgate Data API (HTTP)", "poolgate", gateway, "data-api");
    const planetscaleDoor = httpTarget("poolgate PlanetScale (HTTP)", "poolgate", gateway, "planetscale");
    const inProcess = directTarget("in-process mysql2 pool (floor)", "floor", benchUrl, "pool", S.poolSize);
    const newConnection = directTarget("new connection per request", "alternative", benchUrl, "per-request", S.poolSize);
    const naiveTarget = httpTarget("naive HTTP + mysql2 pool", "alternative", naive);
    const steady: Target[] = [native, dataApi, planetscaleDoor, inProcess, httpAlone(echo), naiveTarget, httpTarget(PIPELINED_FORWARDER.mysql, "alternative", pipelined), newConnection];
    progress.setPhase("MariaDB steady load");
    results.throughput = { ...results.throughput, mysql: await measureRounds(steady, steadyWork("mysql"), S.rounds, "throughput", roundStep(() => estimate.steadyRunS()), S.stability) };
    progress.setPhase(`MariaDB report 1 (${S.burstCallers} callers)`);
    results.burst = { ...results.burst, mysql: await measureRounds([native, inProcess, httpAlone(echo), naiveTarget, newConnection], burstWork("mysql"), S.rounds, "p99", roundStep(estimate.burstRunS), S.stability) };
  } finally {
    for (const server of servers.reverse()) await server.stop();
  }
}

async function topologyPart(): Promise<void> {
  const { runReadScaling } = await import("./topology-bench.js");
  const { runFailovers } = await import("./failover-bench.js");
  progress.setPhase("report 3 (read scaling)");
  results.readScaling = await runReadScaling(S.callers, S.durationMs, S.poolSize, S.rounds, step);
  progress.setPhase(`failovers (${S.failovers} per engine)`);
  results.failover = await runFailovers(S.failovers, step);
}

async function isolationPart(): Promise<void> {
  const { runIsolation } = await import("./isolation-bench.js");
  progress.setPhase("principals");
  results.machine.postgres ??= await preparePostgres(S.adminUrl);
  const work = { benchUrl: benchUrlOf(S.adminUrl), poolSize: S.poolSize, callers: S.callers, durationMs: S.durationMs, warmupMs: S.warmupMs, rounds: S.rounds };
  results.isolation = await runIsolation(work, step);
}

async function cachePart(): Promise<void> {
  const { runCacheBench } = await import("./cache-bench.js");
  progress.setPhase("result cache");
  results.machine.postgres ??= await preparePostgres(S.adminUrl);
  results.machine.mariadb ??= await prepareMysql(S.mysqlAdminUrl);
  const engines = [
    { engine: "postgres" as const, benchUrl: benchUrlOf(S.adminUrl) },
    { engine: "mysql" as const, benchUrl: benchUrlOf(S.mysqlAdminUrl) },
  ];
  results.cache = await runCacheBench(
    { engines, poolSize: S.poolSize, callers: S.callers, durationMs: S.durationMs, warmupMs: S.warmupMs, serverWarmupMs: S.serverWarmupMs, rounds: S.rounds, networkDelayMs: S.cacheNetworkDelayMs },
    step,
  );
}

async function profilePart(): Promise<void> {
  const { runProfiles } = await import("./profile-bench.js");
  progress.setPhase("CPU profiles");
  const work = { adminUrl: S.adminUrl, mysqlAdminUrl: S.mysqlAdminUrl, engines: ["postgres", "mysql"] as const, poolSize: S.poolSize, callers: S.callers, durationMs: S.durationMs, warmupMs: S.warmupMs, serverWarmupMs: S.serverWarmupMs, outDir: S.outDir };
  results.profiles = await runProfiles({ ...work, engines: [...work.engines] }, step);
}

async function instructionsPart(): Promise<void> {
  const { runInstructionLedger, valgrindInstalled } = await import("./instructions-bench.js");
  if (!valgrindInstalled()) {
    results.failures.push("instructions: valgrind (with callgrind_control) is not installed; apt-get install valgrind");
    return;
  }
  progress.setPhase("instruction ledger");
  results.instructions = await runInstructionLedger({ adminUrl: S.adminUrl, mysqlAdminUrl: S.mysqlAdminUrl, poolSize: S.poolSize, outDir: S.outDir }, step);
}

async function streamingPart(): Promise<void> {
  const { runStreaming } = await import("./streaming-bench.js");
  progress.setPhase("reads of any size");
  results.streaming = [];
  const { versions, failures } = await runStreaming(S.adminUrl, S.mysqlAdminUrl, S.streamRows, step, results.streaming);
  results.machine.postgres ??= versions.postgres;
  results.machine.mariadb ??= versions.mariadb;
  results.failures.push(...failures);
}

async function auroraPart(): Promise<void> {
  const { runAurora } = await import("./aurora-bench.js");
  const { runAuroraFailover } = await import("./aurora-failover-bench.js");
  progress.setPhase("Aurora stand-in: token reads");
  const rows: NonNullable<typeof results.aurora> = (results.aurora = []);
  try {
    rows.push(...(await runAurora(S.durationMs, step)));
  } catch (err) {
    // The failover row is measured all the same (its stand-in is another one).
    results.failures.push(`aurora token reads: ${err instanceof Error ? err.message : String(err)}`.slice(0, 2000));
    await cleanupAll();
  }
  for (const engine of ["postgres", "mysql"] as const) {
    progress.setPhase(`Aurora stand-in: failover (${engine})`);
    try {
      rows.push(await runAuroraFailover(engine, step));
    } catch (err) {
      // Each engine's failover row is measured on its own stand-in: one failing leaves the other.
      results.failures.push(`aurora failover (${engine}): ${err instanceof Error ? err.message : String(err)}`.slice(0, 2000));
      await cleanupAll();
    }
  }
}

async function lifecyclePart(): Promise<void> {
  const { runSwitchoverBench } = await import("./switchover-bench.js");
  progress.setPhase("Aurora stand-in: a Blue/Green switchover");
  results.lifecycle = { ...results.lifecycle, ...(await runSwitchoverBench(step)) };
  const { runResumeBench } = await import("./lifecycle-bench.js");
  progress.setPhase("lifecycle: a paused database resumes");
  results.lifecycle = { ...results.lifecycle, ...(await runResumeBench(step)) };
}

/**
 * What tracing costs (docs/tracing.md): the PostgreSQL steady load against four gateways, tracing off,
 * on with 1% and 100% of traces sampled (exported over OTLP/HTTP to a receiver stand-in in this
 * process, which decodes and counts them), and query insights on with tracing off.
 */
async function tracingPart(): Promise<void> {
  progress.setPhase("tracing cost");
  results.machine.postgres ??= await preparePostgres(S.adminUrl);
  const benchUrl = benchUrlOf(S.adminUrl);
  const receiver = await startOtlpReceiver({ keep: false });
  const servers: Server[] = [];
  try {
    const targets = await step("starting four gateways (tracing off, 1%, 100%; insights on)", 4, async () => {
      const start = async (extra: object) => {
        const server = await startGateway(gatewayConfig(benchUrl, extra));
        servers.push(server);
        return server;
      };
      const traced = (sampleRatio: number) => ({ tracing: { enabled: true, endpoint: receiver.url, sampleRatio } });
      return [
        httpTarget("tracing off", "poolgate", await start({})),
        httpTarget("tracing on, 1% sampled", "alternative", await start(traced(0.01))),
        httpTarget("tracing on, 100% sampled", "alternative", await start(traced(1))),
        httpTarget("insights on, tracing off", "alternative", await start({ insights: { enabled: true } })),
      ];
    });
    results.tracing = await measureRounds(targets, steadyWork("postgres"), S.rounds, "throughput", roundStep(() => estimate.steadyRunS()), S.stability);
    results.notes.push(`tracing: the OTLP receiver stand-in decoded ${receiver.received} spans in ${receiver.requests} export requests`);
  } finally {
    for (const server of servers.reverse()) await server.stop();
    await receiver.close();
  }
}

async function clientPart(): Promise<void> {
  const { runClientBench } = await import("./client-bench.js");
  progress.setPhase("the client beside other HTTP drivers");
  results.client = await runClientBench(step);
}

const PARTS: [name: string, enabled: boolean, run: () => Promise<void>][] = [
  ["PostgreSQL", POSTGRES_PARTS.some((part) => S.only.has(part)), postgresPart],
  ["MariaDB", S.only.has("mysql"), mysqlPart],
  ["topology", S.only.has("topology"), topologyPart],
  ["isolation", S.only.has("isolation"), isolationPart],
  ["cache", S.only.has("cache"), cachePart],
  ["profile", S.only.has("profile"), profilePart],
  ["instructions", S.only.has("instructions"), instructionsPart],
  ["streaming", S.only.has("streaming"), streamingPart],
  ["aurora", S.only.has("aurora"), auroraPart],
  ["lifecycle", S.only.has("lifecycle"), lifecyclePart],
  ["client", S.only.has("client"), clientPart],
  ["tracing", S.only.has("tracing"), tracingPart],
];

function save(): { svg: string; json: string } {
  const dir = resolve(S.outDir);
  mkdirSync(dir, { recursive: true });
  const json = join(dir, "bench.json");
  const svg = join(dir, "bench.svg");
  writeFileSync(json, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(svg, renderBenchFigure(results));
  return { svg, json };
}

async function main(): Promise<void> {
  const started = performance.now();
  exitCleanlyOnSignals(() => progress.finish());
  progress.plan(estimate.totalS(S.only));
  results.notes.push(
    "new connection per request and PgBouncer clients connect from the driver process itself (as a Lambda would), so they pay no HTTP hop; poolgate's figures include one",
    "report 1's 750 callers are closed-loop (each sends its next request when the last one answers), on one machine, where report 1 had 4 web servers and an r4.2xlarge Aurora",
    "report 2 runs on PostgreSQL serializable transactions (40001) rather than Aurora DSQL's optimistic concurrency (OC000); PgBouncer is left out of it (it forwards the same errors and retries nothing)",
    "report 4 uses an unlogged table so the disk's WAL flush does not set the cost; report 4 itself ran on an embedded database",
    "ProxySQL (report 3) and RDS Proxy are not on this machine; PgBouncer stands for the proxy, and only in front of PostgreSQL; report 4 runs on PostgreSQL only",
    "the Data API through the AWS SDK is measured in the steady load only (its driver runs for a duration, not a count); CPU µs/req is the serving process's (the gateway, the naive server, or the in-process pool's own)",
  );
  for (const [name, enabled, run] of PARTS) {
    if (!enabled) continue;
    try {
      await run();
    } catch (err) {
      results.failures.push(`${name}: ${err instanceof Error ? err.message : String(err)}`.slice(0, 2000));
      await cleanupAll();
    }
  }
  results.finishedAt = new Date().toISOString();
  results.durationMs = Math.round(performance.now() - started);
  results.machine.loadAfter = loadavg()[0];
  progress.finish();
  console.log(reportLines(results).join("\n"));
  const saved = save();
  console.log(`\nchart saved to ${saved.svg}\nraw results saved to ${saved.json}\nthe bench took ${(results.durationMs / 60000).toFixed(1)} min`);
  await cleanupAll();
  if (results.failures.length > 0) process.exitCode = 1;
}

await main();
