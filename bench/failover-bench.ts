/**
 * The failover part of `npm run bench`: on each engine, a primary and a synchronous standby started
 * from the machine's binaries (test/support/failover-pair.ts) are failed over several times in a row
 * under ten writers and ten readers through the gateway (the failover suite's scenario,
 * test/support/failover-scenario.ts), with the dead primary rejoining as the standby between runs.
 * Per run: how soon writes resumed once the gateway's monitor saw the new primary (and after the
 * promotion command returned), read p99 inside the failover window against the seconds before it, and
 * every failed write by code.
 */
import { Pool } from "undici";
import { type FailoverPair, startMariaDbFailoverPair, startPgFailoverPair } from "../test/support/failover-pair.js";
import { type FailoverRun, runFailoverScenario, type ScenarioGateway } from "../test/support/failover-scenario.js";
import { estimate } from "./estimates.js";
import { onCleanup, startGateway } from "./processes.js";
import type { FailoverEngineResult, FailoverRunFigures } from "./results.js";
import { summarise } from "./workload.js";

type Step = <T>(label: string, estimateS: number, work: () => Promise<T>) => Promise<T>;

const CLUSTER = "default";
/** Steady load before each kill: the "before" window of the read latencies. */
const BEFORE_MS = 2000;
/** Load after writes resumed, inside the failover window. */
const AFTER_RESUME_MS = 1000;

function gatewayFor(http: Pool): ScenarioGateway {
  const call = async (method: "GET" | "POST", path: string, body?: unknown) => {
    const response = await http.request({
      method,
      path,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.statusCode, body: await response.body.json() };
  };
  return { post: (path, body) => call("POST", path, body), get: (path) => call("GET", path) };
}

const p99Of = (latencies: number[]) => summarise(latencies, 1).p99;

/** One run's figures: the failover window runs from the kill to the end of the load. */
function figuresOf(run: FailoverRun): FailoverRunFigures {
  const before = run.reads.filter((read) => read.sentAt >= run.killStartedAt - BEFORE_MS && read.sentAt < run.killStartedAt && read.failure === undefined);
  const during = run.reads.filter((read) => read.sentAt >= run.killStartedAt && read.failure === undefined);
  const failedWritesByCode: Record<string, number> = {};
  for (const write of run.writes) if (write.code !== undefined) failedWritesByCode[write.code] = (failedWritesByCode[write.code] ?? 0) + 1;
  const firstAfterPromotion = Math.min(...run.writes.filter((write) => write.code === undefined && write.answeredAt >= run.promotedAt).map((write) => write.answeredAt));
  return {
    resumedAfterSeenMs: run.firstWriteAfterSeenAt === undefined || run.primarySeenAt === undefined ? null : run.firstWriteAfterSeenAt - run.primarySeenAt,
    resumedAfterPromotionMs: Number.isFinite(firstAfterPromotion) ? firstAfterPromotion - run.promotedAt : null,
    primarySeenAfterPromotionMs: run.primarySeenAt === undefined ? null : run.primarySeenAt - run.promotedAt,
    readP99BeforeMs: p99Of(before.map((read) => read.latencyMs)),
    readP99DuringMs: p99Of(during.map((read) => read.latencyMs)),
    acknowledgedWrites: run.writes.filter((write) => write.code === undefined).length,
    lostAcknowledgedWrites: run.lost.length,
    failedReads: run.reads.filter((read) => read.failure !== undefined).length,
    failedWritesByCode,
    failoversCounted: run.failoversAdded,
  };
}

/** What happened in a run, in order, in ms from the kill. */
function timelineOf(run: FailoverRun): string[] {
  const events: [number | undefined, string][] = [
    [run.killStartedAt, "kill -9 the primary"],
    [run.killedAt, "the primary no longer answers"],
    [run.noPrimaryAt, "the gateway reports no primary (seen by polling it)"],
    [run.promotedAt, "the promotion command returned"],
    [run.primarySeenAt, "the gateway's monitor sees the new primary"],
    [run.firstWriteAfterSeenAt, "first write acknowledged after that"],
  ];
  return events
    .filter((event): event is [number, string] => event[0] !== undefined)
    .sort((a, b) => a[0] - b[0])
    .map(([at, event]) => `+${String(at - run.killStartedAt).padStart(5)} ms  ${event}`);
}

async function failoversOn(engine: FailoverEngineResult["engine"], start: () => Promise<FailoverPair>, runs: number, step: Step): Promise<FailoverEngineResult> {
  const name = engine === "postgres" ? "PostgreSQL" : "MariaDB";
  const pair = await step(`${name}: starting a primary and a synchronous standby`, estimate.failoverPairStartS(), start);
  const deregister = onCleanup(() => pair.destroy());
  try {
    for (const sql of pair.dialect.createTables) await pair.queryPrimary(sql);
    const gateway = await startGateway({
      clusters: { [CLUSTER]: { writerUrl: pair.writerUrl, readerUrls: [pair.readerUrl] } },
      topology: { checkIntervalMs: 200, checkTimeoutMs: 500, failoverWaitMs: 20000 },
    });
    const http = new Pool(gateway.url, { connections: 24 });
    try {
      const result: FailoverEngineResult = { engine, runs: [], timeline: [] };
      for (let run = 1; run <= runs; run++) {
        const outcome = await step(`${name}: failover ${run}/${runs}`, estimate.failoverRunS(), async () => {
          const scenario = await runFailoverScenario(pair, gatewayFor(http), {
            cluster: CLUSTER,
            writers: 10,
            readers: 10,
            runId: `bench${run}`,
            writesBeforeKill: 30,
            loadBeforeKillMs: BEFORE_MS,
            afterResumeMs: AFTER_RESUME_MS,
          });
          await pair.rejoinAsStandby();
          return scenario;
        });
        result.runs.push(figuresOf(outcome));
        if (run === 1) result.timeline = timelineOf(outcome);
      }
      return result;
    } finally {
      await http.close();
      await gateway.stop();
    }
  } finally {
    deregister();
    await pair.destroy();
  }
}

/** Several failovers in a row on PostgreSQL, then on MariaDB. */
export async function runFailovers(runs: number, step: Step): Promise<FailoverEngineResult[]> {
  return [await failoversOn("postgres", startPgFailoverPair, runs, step), await failoversOn("mysql", startMariaDbFailoverPair, runs, step)];
}
