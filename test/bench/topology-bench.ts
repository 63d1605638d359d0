/**
 * The topology part of `npm run bench`: read scaling with 0, 1 and 2 replicas, and a failover under
 * steady read and write load (kill the primary, promote a replica) with its timeline. Runs a real
 * primary and two streaming replicas from the machine's PostgreSQL binaries (test/support/pg-topology).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import { type PgInstance, startTopology } from "../support/pg-topology.js";
import { SEED_ROWS } from "./workload.js";

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

interface Gateway {
  child: ChildProcess;
  url: string;
}

async function startGateway(writer: PgInstance, readers: PgInstance[], poolSize: number): Promise<Gateway> {
  const configFile = join(mkdtempSync(join(tmpdir(), "poolgate-bench-topology-")), "poolgate.json");
  writeFileSync(
    configFile,
    JSON.stringify({
      clusters: { default: { writerUrl: writer.url(), readerUrls: readers.map((r) => r.url()) } },
      pool: { maxSize: poolSize },
      topology: { checkIntervalMs: 200, checkTimeoutMs: 500 },
    }),
  );
  const child = spawn(process.execPath, [here("../../gateway/main.js")], {
    env: { ...process.env, POOLGATE_CONFIG: configFile, PORT: "0", LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/[\d.:]+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.on("exit", (code) => reject(new Error(`gateway exited ${code}: ${out}`)));
  });
  return { child, url };
}

function stopGateway(gateway: Gateway): Promise<void> {
  return new Promise((resolve) => {
    if (gateway.child.exitCode !== null) return resolve();
    gateway.child.once("exit", () => resolve());
    gateway.child.kill("SIGTERM");
  });
}

async function post(http: Pool, body: unknown): Promise<{ status: number; body: { rows?: { id?: number }[]; error?: { code: string } } }> {
  const response = await http.request({ method: "POST", path: "/v1/query", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.statusCode, body: (await response.body.json()) as { rows?: { id?: number }[]; error?: { code: string } } };
}

async function readThroughput(gateway: Gateway, callers: number, durationMs: number): Promise<{ throughput: number; errors: number }> {
  const http = new Pool(gateway.url, { connections: callers });
  const warmupEnd = Date.now() + 1000;
  const loop = async (until: number, count: boolean) => {
    let ok = 0;
    let errors = 0;
    while (Date.now() < until) {
      const id = 1 + Math.floor(Math.random() * SEED_ROWS);
      const response = await post(http, { sql: "SELECT id, name, balance FROM accounts WHERE id = $1", params: [id] });
      if (response.status === 200) ok++;
      else errors++;
    }
    return count ? { ok, errors } : { ok: 0, errors: 0 };
  };
  await Promise.all(Array.from({ length: callers }, () => loop(warmupEnd, false)));
  const started = Date.now();
  const results = await Promise.all(Array.from({ length: callers }, () => loop(started + durationMs, true)));
  const elapsed = Date.now() - started;
  await http.close();
  const ok = results.reduce((sum, r) => sum + r.ok, 0);
  return { throughput: (ok / elapsed) * 1000, errors: results.reduce((sum, r) => sum + r.errors, 0) };
}

interface FailoverReport {
  acknowledgedWrites: number;
  writeUnavailableMs: number;
  resumedAfterPromotionMs: number;
  failedReads: number;
  failedWrites: number;
  unknownOutcomeWrites: number;
  lostAcknowledgedWrites: number;
  timeline: string[];
}

async function failoverRun(writers: number, readers: number): Promise<FailoverReport> {
  const topology = await startTopology(2, { synchronousStandby: "replica1" });
  const [primary, replica1, replica2] = topology.all() as [PgInstance, PgInstance, PgInstance];
  const gateway = await startGateway(primary, [replica1, replica2], 10);
  const http = new Pool(gateway.url, { connections: writers + readers });
  const events: { at: number; event: string }[] = [];
  const mark = (event: string, at = Date.now()) => events.push({ at, event });
  try {
    await post(http, { sql: "create table ledger (id serial primary key, at timestamptz default now())" });
    const acknowledged: number[] = [];
    const ackTimes: number[] = [];
    let failedReads = 0;
    let failedWrites = 0;
    let unknown = 0;
    let stop = false;
    const writeLoop = async () => {
      while (!stop) {
        const response = await post(http, { sql: "insert into ledger default values returning id", timeoutMs: 15000 });
        if (response.status === 200 && response.body.rows?.[0]?.id !== undefined) {
          acknowledged.push(response.body.rows[0].id);
          ackTimes.push(Date.now());
        } else if (response.body.error?.code === "OUTCOME_UNKNOWN") unknown++;
        else failedWrites++;
      }
    };
    const readLoop = async () => {
      while (!stop) if ((await post(http, { sql: "select count(*) from ledger" })).status !== 200) failedReads++;
    };
    const loops = [...Array.from({ length: writers }, writeLoop), ...Array.from({ length: readers }, readLoop)];
    await new Promise((resolve) => setTimeout(resolve, 2000));
    mark("steady load running; killing the primary (immediate shutdown)");
    const killedAt = Date.now();
    await primary.stop("immediate");
    mark("primary down");
    await new Promise((resolve) => setTimeout(resolve, 500));
    mark("promoting replica1");
    await replica1.promote();
    const promotedAt = Date.now();
    mark("replica1 promoted");
    await replica2.follow(replica1);
    mark("replica2 follows replica1");
    await new Promise((resolve) => setTimeout(resolve, 1500));
    stop = true;
    await Promise.all(loops);
    // The write outage is the longest gap between acknowledged writes after the kill was issued.
    let lastBefore = killedAt;
    let firstAfter = killedAt;
    const after = ackTimes.filter((t) => t >= killedAt).sort((a, b) => a - b);
    for (let i = 1; i < after.length; i++) {
      const gap = (after[i] as number) - (after[i - 1] as number);
      if (gap > firstAfter - lastBefore) [lastBefore, firstAfter] = [after[i - 1] as number, after[i] as number];
    }
    mark("last write acknowledged by the old primary", lastBefore);
    mark("first write acknowledged by the new primary", firstAfter);
    const present = new Set((await replica1.query<{ id: number }>("select id from ledger")).map((row) => row.id));
    return {
      acknowledgedWrites: acknowledged.length,
      writeUnavailableMs: firstAfter - lastBefore,
      resumedAfterPromotionMs: firstAfter - promotedAt,
      failedReads,
      failedWrites,
      unknownOutcomeWrites: unknown,
      lostAcknowledgedWrites: acknowledged.filter((id) => !present.has(id)).length,
      timeline: events
        .sort((a, b) => a.at - b.at)
        .map(({ at, event }) => `+${String(at - killedAt).padStart(5)} ms  ${event}`),
    };
  } finally {
    await http.close();
    await stopGateway(gateway);
    await topology.destroy();
  }
}

export async function runTopologyBench(callers: number, durationMs: number, poolSize: number): Promise<void> {
  console.log("\nread scaling: point selects through the gateway with 0, 1 and 2 streaming replicas (same machine, 2 cores)");
  const topology = await startTopology(2);
  try {
    const [primary, replica1, replica2] = topology.all() as [PgInstance, PgInstance, PgInstance];
    await primary.query("create table accounts (id int primary key, name text not null, balance int not null)");
    await primary.query(`insert into accounts select g, 'account-' || g, g * 10 from generate_series(1, ${SEED_ROWS}) g`);
    await primary.query("analyze accounts");
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const readers of [[], [replica1], [replica1, replica2]]) {
      const gateway = await startGateway(primary, readers, poolSize);
      const result = await readThroughput(gateway, callers, durationMs);
      await stopGateway(gateway);
      console.log(`  ${readers.length} replica(s): ${Math.round(result.throughput)} req/s, ${result.errors} errors`);
    }
  } finally {
    await topology.destroy();
  }

  console.log("\nfailover under steady load (4 writers, 8 readers): kill -immediate the primary, promote replica1 after 500 ms");
  const report = await failoverRun(4, 8);
  for (const line of report.timeline) console.log(`  ${line}`);
  console.log(
    `  write unavailability ${report.writeUnavailableMs} ms (first new write ${report.resumedAfterPromotionMs} ms after pg_ctl promote returned; negative: the monitor saw the new primary first); ` +
      `${report.acknowledgedWrites} writes acknowledged, ${report.lostAcknowledgedWrites} of them lost; ` +
      `${report.unknownOutcomeWrites} unknown-outcome writes, ${report.failedWrites} failed writes, ${report.failedReads} failed reads`,
  );
}
