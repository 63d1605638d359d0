/**
 * `npm run bench`: the gateway against the local PostgreSQL, driven over HTTP keep-alive from a
 * separate process, beside (b) an in-process pg.Pool of the same size, (c) a naive HTTP gateway on
 * pg.Pool and (d) a new pg.Client per request; then the same against the local MariaDB through the
 * MySQL engine (mysql2 for b, c and d). Prints throughput, p50/p99/max and the server's CPU time per
 * request, the ratios, and whether the targets are met. Not a test: no assertions.
 * POOLGATE_BENCH_ONLY=postgres, =mysql or =topology runs one part.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import mysql from "mysql2/promise";
import pg from "pg";
import type { DriverSpec } from "./load-driver.js";
import { runTopologyBench } from "./topology-bench.js";
import { type BenchStatement, type LatencySummary, SEED_ROWS } from "./workload.js";

const ADMIN_URL = process.env.POOLGATE_BENCH_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const MYSQL_ADMIN_URL = process.env.POOLGATE_BENCH_MYSQL_URL ?? "mysql://root@127.0.0.1:3306/test";
const DATABASE = "poolgate_bench";
const POOL_SIZE = Number(process.env.POOLGATE_BENCH_POOL ?? 10);
const CALLERS = Number(process.env.POOLGATE_BENCH_CALLERS ?? 32);
const DURATION_MS = Number(process.env.POOLGATE_BENCH_DURATION_MS ?? 4000);
const WARMUP_MS = Number(process.env.POOLGATE_BENCH_WARMUP_MS ?? 1500);
const ROUNDS = Number(process.env.POOLGATE_BENCH_ROUNDS ?? 3);
/** The bench runs compiled JavaScript (npm run build), like production: no transpiler in the loop. */
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

interface Row extends LatencySummary {
  target: string;
  statement: BenchStatement | "select1 x1" | "point x1" | "point x750";
  errors: number;
  cpuUsPerRequest: number;
  firstError?: string;
}

const inDatabase = (admin: string) => {
  const url = new URL(admin);
  url.pathname = `/${DATABASE}`;
  return url.toString();
};
const benchUrl = inDatabase(ADMIN_URL);
const mysqlBenchUrl = inDatabase(MYSQL_ADMIN_URL);

async function seedMysql(): Promise<void> {
  const admin = await mysql.createConnection({ uri: MYSQL_ADMIN_URL });
  await admin.query(`CREATE DATABASE IF NOT EXISTS ${DATABASE}`);
  await admin.query(`USE ${DATABASE}`);
  await admin.query("create table if not exists accounts (id int primary key, name varchar(40) not null, balance int not null) engine=InnoDB");
  const [rows] = await admin.query("select count(*) as n from accounts");
  if (Number((rows as { n: number }[])[0]?.n) !== SEED_ROWS) {
    await admin.query("truncate accounts");
    const values = Array.from({ length: SEED_ROWS }, (_, i) => [i + 1, `account-${i + 1}`, (i + 1) * 10]);
    await admin.query("insert into accounts values ?", [values]);
    await admin.query("analyze table accounts");
  }
  await admin.end();
}

async function seed(): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const exists = await admin.query("select 1 from pg_database where datname = $1", [DATABASE]);
  if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${DATABASE}`);
  await admin.end();
  const db = new pg.Client({ connectionString: benchUrl });
  await db.connect();
  await db.query("create table if not exists accounts (id int primary key, name text not null, balance int not null)");
  const { rows } = await db.query("select count(*)::int as n from accounts");
  if (rows[0].n !== SEED_ROWS) {
    await db.query("truncate accounts");
    await db.query(`insert into accounts select g, 'account-' || g, g * 10 from generate_series(1, ${SEED_ROWS}) g`);
    await db.query("analyze accounts");
  }
  await db.end();
}

/** CPU time (µs) a process has used so far, from /proc (user + system). */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1e6) / 100;
}

function runJson<T>(args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on("exit", (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split("\n").pop() ?? "{}") as T) : reject(new Error(`${args[0]} exited ${code}`)),
    );
  });
}

async function startServer(args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = ready.exec(out);
      if (match?.[1]) resolve(match[1].startsWith("http") ? match[1] : `http://127.0.0.1:${match[1]}`);
    });
    child.on("exit", (code) => reject(new Error(`${args[0]} exited ${code}: ${out}`)));
  });
  return { child, url };
}

async function drive(
  server: { child: ChildProcess; url: string },
  target: string,
  spec: Omit<DriverSpec, "url">,
  label: Row["statement"],
  driver: "load-driver" | "sdk-driver" = "load-driver",
): Promise<Row> {
  const pid = server.child.pid as number;
  const before = cpuMicros(pid);
  // The AWS SDK warns about Node 20 on every start; the warning is not part of the measurement.
  const result = await runJson<LatencySummary & { errors: number; firstError?: string }>([
    ...(driver === "sdk-driver" ? ["--no-warnings"] : []),
    here(`./${driver}.js`),
    JSON.stringify({ ...spec, url: server.url }),
  ]);
  // Warm-up requests are included in the CPU window; count them out by measuring the window's share.
  const cpu = cpuMicros(pid) - before;
  const totalRequests = result.requests + warmupRequests(result, spec);
  return { target, statement: label, ...result, cpuUsPerRequest: cpu / Math.max(1, totalRequests) };
}

/** Warm-up runs at roughly the measured rate for warmupMs; estimated from the measured throughput. */
function warmupRequests(result: LatencySummary, spec: Omit<DriverSpec, "url">): number {
  return (result.throughput * spec.warmupMs) / 1000;
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : "-");
const signed = (n: number, digits = 2) => (n >= 0 ? `+${fmt(n, digits)}` : fmt(n, digits));

function printTable(rows: Row[]): void {
  const header = ["target", "statement", "req/s", "p50 ms", "p99 ms", "max ms", "server CPU µs/req", "errors"];
  const lines = rows.map((r) => [
    r.target,
    r.statement,
    fmt(r.throughput, 0),
    fmt(r.p50),
    fmt(r.p99),
    fmt(r.max),
    fmt(r.cpuUsPerRequest, 0),
    String(r.errors),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const row = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] as number)).join("  ");
  console.log(row(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const line of lines) console.log(row(line));
}

/** Runs each measurement ROUNDS times, interleaved, and keeps the median round of each. */
async function measureInto(rows: Row[], label: string, runs: (() => Promise<Row>)[]): Promise<void> {
  const rounds: Row[][] = runs.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, run] of runs.entries()) (rounds[i] as Row[]).push(await run());
    process.stderr.write(`\r  ${label}: round ${round + 1}/${ROUNDS} done   `);
  }
  process.stderr.write("\n");
  rows.push(...rounds.map(median));
}

function inProcessRun(url: string, target: string) {
  return async (statement: BenchStatement, callers: number, label: Row["statement"]): Promise<Row> => {
    const result = await runJson<Row>([
      here("./in-process-pool.js"),
      url,
      String(POOL_SIZE),
      statement,
      String(callers),
      String(DURATION_MS),
      String(WARMUP_MS),
    ]);
    return { ...result, target, statement: label };
  };
}

/** Of several rounds of the same measurement, the one with the median throughput. */
function median(rounds: Row[]): Row {
  const sorted = [...rounds].sort((x, y) => x.throughput - y.throughput);
  const middle = sorted[Math.floor(sorted.length / 2)] as Row;
  return { ...middle, errors: rounds.reduce((sum, r) => sum + r.errors, 0), firstError: rounds.find((r) => r.firstError)?.firstError };
}

async function main(): Promise<void> {
  if (process.env.POOLGATE_BENCH_ONLY === "topology") return runTopologyBench(CALLERS, DURATION_MS, POOL_SIZE);
  if (process.env.POOLGATE_BENCH_ONLY === "mysql") return benchMysql(undefined);
  await seed();
  console.log(
    `poolgate bench: pool size ${POOL_SIZE}, ${CALLERS} concurrent keep-alive callers, ${DURATION_MS} ms per run after ${WARMUP_MS} ms warm-up, ` +
      `targets interleaved over ${ROUNDS} rounds (median shown), ${SEED_ROWS} seeded rows, node ${process.version}\n`,
  );
  const base = { path: "/v1/query", callers: CALLERS, durationMs: DURATION_MS, warmupMs: WARMUP_MS };

  const configFile = join(mkdtempSync(join(tmpdir(), "poolgate-bench-")), "poolgate.json");
  writeFileSync(configFile, JSON.stringify({ pool: { maxSize: POOL_SIZE } }));
  const gatewayEnv = { POOLGATE_CONFIG: configFile, POOLGATE_WRITER_URL: benchUrl, PORT: "0", LOG_LEVEL: "info" };
  const gateway = await startServer([here("../../gateway/main.js")], gatewayEnv, /listening on (http:\/\/[\d.:]+)/);
  const naive = await startServer([here("./naive-server.js"), "pool", benchUrl, String(POOL_SIZE)], {}, /^(\d+)\n/);
  const perRequest = await startServer([here("./naive-server.js"), "client", benchUrl], {}, /^(\d+)\n/);
  const inProcess = inProcessRun(benchUrl, "(b) in-process pg.Pool");

  // JIT and plan caches warm up on every server before anything is measured.
  for (const server of [gateway, naive]) {
    for (const statement of ["select1", "point"] as const) await drive(server, "warm-up", { ...base, statement, durationMs: WARMUP_MS }, statement);
  }

  const rows: Row[] = [];
  const measure = (label: string, runs: (() => Promise<Row>)[]) => measureInto(rows, label, runs);
  for (const statement of ["select1", "point"] as const) {
    await measure(statement, [
      () => drive(gateway, "(a) poolgate", { ...base, statement }, statement),
      () => drive(gateway, "(a2) poolgate Data API (HTTP)", { ...base, statement, surface: "data-api" }, statement),
      () => drive(gateway, "(a3) poolgate Data API (AWS SDK)", { ...base, statement }, statement, "sdk-driver"),
      () => inProcess(statement, CALLERS, statement),
      () => drive(naive, "(c) naive http + pg.Pool", { ...base, statement }, statement),
      () => drive(perRequest, "(d) new pg.Client per request", { ...base, statement }, statement),
    ]);
  }
  for (const [statement, label] of [
    ["select1", "select1 x1"],
    ["point", "point x1"],
  ] as const) {
    await measure(label, [
      () => drive(gateway, "(a) poolgate", { ...base, statement, callers: 1 }, label),
      () => drive(gateway, "(a2) poolgate Data API (HTTP)", { ...base, statement, callers: 1, surface: "data-api" }, label),
      () => drive(gateway, "(a3) poolgate Data API (AWS SDK)", { ...base, statement, callers: 1 }, label, "sdk-driver"),
      () => inProcess(statement, 1, label),
      () => drive(naive, "(c) naive http + pg.Pool", { ...base, statement, callers: 1 }, label),
    ]);
  }
  await measure("point x750", [
    () =>
      drive(
        gateway,
        "(a) poolgate",
        { ...base, statement: "point", callers: 750, durationMs: undefined, requestsPerCaller: 20 },
        "point x750",
      ),
  ]);
  await Promise.all([stop(gateway.child), stop(naive.child), stop(perRequest.child)]);

  rows.sort((x, y) => x.target.localeCompare(y.target));
  printTable(rows);
  printVerdicts(rows);
  if (process.env.POOLGATE_BENCH_ONLY === "postgres") return;
  await benchMysql(rows);
  await runTopologyBench(CALLERS, DURATION_MS, POOL_SIZE);
}

/**
 * The MySQL engine on the local MariaDB, with mysql2 for the comparison targets, and the same
 * statements; beside the PostgreSQL figures when they were measured in this run.
 */
async function benchMysql(postgresRows: Row[] | undefined): Promise<void> {
  await seedMysql();
  console.log(`\nMySQL engine on the local MariaDB (${DATABASE}), same statements with ? placeholders, same pool size and callers\n`);
  const base = { path: "/v1/query", callers: CALLERS, durationMs: DURATION_MS, warmupMs: WARMUP_MS, dialect: "mysql" as const };
  const configFile = join(mkdtempSync(join(tmpdir(), "poolgate-bench-")), "poolgate.json");
  writeFileSync(configFile, JSON.stringify({ pool: { maxSize: POOL_SIZE } }));
  const gatewayEnv = { POOLGATE_CONFIG: configFile, POOLGATE_WRITER_URL: mysqlBenchUrl, PORT: "0", LOG_LEVEL: "info" };
  const gateway = await startServer([here("../../gateway/main.js")], gatewayEnv, /listening on (http:\/\/[\d.:]+)/);
  const naive = await startServer([here("./naive-server.js"), "mysql-pool", mysqlBenchUrl, String(POOL_SIZE)], {}, /^(\d+)\n/);
  const perRequest = await startServer([here("./naive-server.js"), "mysql-client", mysqlBenchUrl], {}, /^(\d+)\n/);
  const inProcess = inProcessRun(mysqlBenchUrl, "(b) in-process mysql2 pool");
  for (const server of [gateway, naive]) {
    for (const statement of ["select1", "point"] as const) await drive(server, "warm-up", { ...base, statement, durationMs: WARMUP_MS }, statement);
  }
  const rows: Row[] = [];
  for (const statement of ["select1", "point"] as const) {
    await measureInto(rows, `mysql ${statement}`, [
      () => drive(gateway, "(a) poolgate -> MySQL", { ...base, statement }, statement),
      () => inProcess(statement, CALLERS, statement),
      () => drive(naive, "(c) naive http + mysql2 pool", { ...base, statement }, statement),
      () => drive(perRequest, "(d) new mysql2 connection per request", { ...base, statement }, statement),
    ]);
  }
  await measureInto(rows, "mysql point x1", [
    () => drive(gateway, "(a) poolgate -> MySQL", { ...base, statement: "point", callers: 1 }, "point x1"),
    () => inProcess("point", 1, "point x1"),
  ]);
  await measureInto(rows, "mysql point x750", [
    () => drive(gateway, "(a) poolgate -> MySQL", { ...base, statement: "point", callers: 750, durationMs: undefined, requestsPerCaller: 20 }, "point x750"),
  ]);
  await Promise.all([stop(gateway.child), stop(naive.child), stop(perRequest.child)]);
  rows.sort((x, y) => x.target.localeCompare(y.target));
  printTable(rows);

  const find = (from: Row[], target: string, statement: Row["statement"]) => from.find((r) => r.target.startsWith(target) && r.statement === statement);
  const point = { a: find(rows, "(a)", "point"), b: find(rows, "(b)", "point"), c: find(rows, "(c)", "point"), d: find(rows, "(d)", "point") };
  const burst = find(rows, "(a)", "point x750");
  console.log("\nMySQL ratios");
  if (point.a && point.b && point.c && point.d) {
    console.log(
      `  point poolgate/naive ${fmt(point.a.throughput / point.c.throughput)}x  poolgate/in-process ${fmt(point.a.throughput / point.b.throughput)}x  poolgate/new-connection ${fmt(point.a.throughput / point.d.throughput, 1)}x`,
    );
  }
  if (burst) console.log(`  750 callers on a pool of ${POOL_SIZE}: ${burst.errors} errors, p99 ${fmt(burst.p99)} ms, max ${fmt(burst.max)} ms`);
  if (postgresRows) {
    console.log("\nPostgreSQL beside MySQL through the gateway (same statements, pool, callers)");
    for (const statement of ["select1", "point", "point x1", "point x750"] as const) {
      const pgRow = find(postgresRows, "(a)", statement);
      const myRow = find(rows, "(a)", statement);
      if (pgRow && myRow) {
        console.log(
          `  ${statement.padEnd(10)} PostgreSQL ${fmt(pgRow.throughput, 0)} req/s p50 ${fmt(pgRow.p50)} p99 ${fmt(pgRow.p99)} ms | MySQL ${fmt(myRow.throughput, 0)} req/s p50 ${fmt(myRow.p50)} p99 ${fmt(myRow.p99)} ms`,
        );
      }
    }
  }
  for (const r of rows.filter((row) => row.errors > 0)) console.log(`  errors in ${r.target} ${r.statement}: ${r.errors}, first: ${r.firstError}`);
}

function printVerdicts(rows: Row[]): void {
  const find = (target: string, statement: Row["statement"]) =>
    rows.find((r) => r.target.startsWith(target) && r.statement === statement) as Row;
  const verdict = (ok: boolean) => (ok ? "PASS" : "MISS");
  console.log("\nratios and targets");
  for (const statement of ["select1", "point"] as const) {
    const a = find("(a)", statement);
    const b = find("(b)", statement);
    const c = find("(c)", statement);
    const d = find("(d)", statement);
    console.log(
      `  ${statement.padEnd(8)} poolgate/naive ${fmt(a.throughput / c.throughput)}x  poolgate/in-process ${fmt(a.throughput / b.throughput)}x  naive/in-process ${fmt(c.throughput / b.throughput)}x  poolgate/new-connection ${fmt(a.throughput / d.throughput, 1)}x  CPU poolgate ${fmt(a.cpuUsPerRequest, 0)} µs vs naive ${fmt(c.cpuUsPerRequest, 0)} µs`,
    );
  }
  const point = { a: find("(a)", "point"), c: find("(c)", "point"), d: find("(d)", "point") };
  const seqA = find("(a)", "point x1");
  const seqB = find("(b)", "point x1");
  const burst = find("(a)", "point x750");
  console.log(
    `  [${verdict(point.a.throughput >= 1.1 * point.c.throughput)}] point-select throughput >= 1.1x the naive gateway (${fmt(point.a.throughput / point.c.throughput)}x)`,
  );
  console.log(
    `  [${verdict(point.a.throughput >= 20 * point.d.throughput)}] >= 20x a new connection per request (${fmt(point.a.throughput / point.d.throughput, 1)}x)`,
  );
  console.log(
    `  [${verdict(seqA.p50 - seqB.p50 <= 0.3)}] sequential caller p50 within 0.3 ms of the in-process pool (${fmt(seqA.p50, 3)} vs ${fmt(seqB.p50, 3)} ms, +${fmt(seqA.p50 - seqB.p50, 3)})`,
  );
  console.log(
    `  [${verdict(burst.errors === 0 && burst.max <= 3 * burst.p99)}] 750 callers on a pool of ${POOL_SIZE}: ${burst.errors} errors, max ${fmt(burst.max)} ms <= 3 x p99 ${fmt(burst.p99)} ms`,
  );
  console.log("\nData API compatibility layer (same gateway, same statements; (a2) raw HTTP like (a), (a3) through @aws-sdk/client-rds-data)");
  for (const statement of ["point", "point x1"] as const) {
    const native = find("(a)", statement);
    const dataApi = find("(a2)", statement);
    const sdk = find("(a3)", statement);
    console.log(
      `  ${statement.padEnd(9)} native ${fmt(native.throughput, 0)} req/s p50 ${fmt(native.p50, 3)} ms | Data API ${fmt(dataApi.throughput, 0)} req/s p50 ${fmt(dataApi.p50, 3)} ms (${signed((dataApi.throughput / native.throughput - 1) * 100, 1)}% throughput, ${signed(dataApi.p50 - native.p50, 3)} ms p50, server CPU ${fmt(dataApi.cpuUsPerRequest, 0)} vs ${fmt(native.cpuUsPerRequest, 0)} µs) | via AWS SDK ${fmt(sdk.throughput, 0)} req/s p50 ${fmt(sdk.p50, 3)} ms`,
    );
  }
  const failed = rows.filter((r) => r.errors > 0);
  for (const r of failed) console.log(`  errors in ${r.target} ${r.statement}: ${r.errors}, first: ${r.firstError}`);
}

await main();
