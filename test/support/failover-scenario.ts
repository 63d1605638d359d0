/**
 * One failover under load, as the failover suite asserts it and the bench times it: writers insert
 * rows with unique ids and readers count them through the gateway, the primary is killed, the
 * standby promoted once the gateway reports no primary, and the load goes on until writes have
 * resumed. Everything is recorded with wall-clock times, to be judged by the caller: which
 * acknowledged writes are missing on the new primary, which reads and writes failed and how, how many
 * failovers the gateway counted, when it saw the new primary, and read latencies before and during.
 */
import { z } from "zod";
import { topologySchema } from "../../schemas/health.js";
import type { FailoverPair } from "./failover-pair.js";
import { waitFor } from "./wait-for.js";

/** The gateway as the scenario reaches it: over HTTP, in process (tests) or in a child (bench). */
export interface ScenarioGateway {
  post(path: string, body: unknown): Promise<{ status: number; body: unknown }>;
  get(path: string): Promise<{ status: number; body: unknown }>;
}

export interface ScenarioOptions {
  cluster: string;
  writers: number;
  readers: number;
  /** Names the run in the ids it writes (unique across runs). */
  runId: string;
  /** Acknowledged writes before the kill. */
  writesBeforeKill: number;
  /** Steady load before the kill, at least (the bench's "before" window). */
  loadBeforeKillMs?: number;
  /** How long the load goes on once writes have resumed. */
  afterResumeMs: number;
}

export interface WriteOutcome {
  id: string;
  sentAt: number;
  answeredAt: number;
  /** Undefined when acknowledged. */
  code: string | undefined;
}

export interface ReadOutcome {
  sentAt: number;
  latencyMs: number;
  /** Undefined when answered. */
  failure: string | undefined;
}

export interface FailoverRun {
  writes: WriteOutcome[];
  reads: ReadOutcome[];
  /** Acknowledged ids the new primary does not have. */
  lost: string[];
  killStartedAt: number;
  /** The primary no longer answers. */
  killedAt: number;
  /** The gateway first reported no primary. */
  noPrimaryAt: number;
  /** The promotion command returned. */
  promotedAt: number;
  /** When the gateway's monitor recorded the new primary (its failover record's resolvedAt). */
  primarySeenAt: number | undefined;
  /** First write acknowledged at or after primarySeenAt. */
  firstWriteAfterSeenAt: number | undefined;
  failoversAdded: number;
  /** The failover records the gateway added during the run (times, from/to, reason, timeline). */
  failoversRecorded: z.infer<typeof topologySchema>["failovers"];
  newPrimary: string | undefined;
  /** Sessions the promoted endpoint's pool retired during the run (a promotion keeps good ones). */
  promotedPoolRetired: number;
}

const topologyAnswer = z.object({ clusters: z.record(z.string(), topologySchema) });
const errorAnswer = z.object({ error: z.object({ code: z.string() }) });

const DEADLINE_MS = 30000;

/** The scenario polls often (10 ms): the bench reads its timestamps. */
function until(condition: () => boolean | Promise<boolean>, what: string, deadlineMs = DEADLINE_MS): Promise<void> {
  return waitFor(condition, deadlineMs, `failover scenario: ${what}`, 10);
}

export async function topologyOf(gateway: ScenarioGateway, cluster: string): Promise<z.infer<typeof topologySchema>> {
  const answer = await gateway.get("/v1/admin/topology");
  const topology = topologyAnswer.parse(answer.body).clusters[cluster];
  if (!topology) throw new Error(`the gateway has no cluster ${cluster}`);
  return topology;
}

function codeOf(body: unknown, status: number): string {
  const parsed = errorAnswer.safeParse(body);
  return parsed.success ? parsed.data.error.code : `HTTP ${status}`;
}

export async function runFailoverScenario(pair: FailoverPair, gateway: ScenarioGateway, options: ScenarioOptions): Promise<FailoverRun> {
  const { cluster } = options;
  const promotedName = pair.standbyEndpoint(cluster);
  const before = await topologyOf(gateway, cluster);
  const retiredBefore = before.endpoints.find((endpoint) => endpoint.name === promotedName)?.pool.retired ?? 0;
  const writes: WriteOutcome[] = [];
  const reads: ReadOutcome[] = [];
  let stop = false;

  const writer = async (w: number) => {
    for (let i = 0; !stop; i++) {
      const id = `${options.runId}-${w}-${i}`;
      const sentAt = Date.now();
      const answer = await gateway.post("/v1/query", { sql: pair.dialect.insert, params: [id], timeoutMs: 20000, cluster });
      writes.push({ id, sentAt, answeredAt: Date.now(), code: answer.status === 200 ? undefined : codeOf(answer.body, answer.status) });
    }
  };
  const reader = async () => {
    while (!stop) {
      const sentAt = Date.now();
      const started = performance.now();
      const answer = await gateway.post("/v1/query", { sql: pair.dialect.read, cluster });
      const failure = answer.status === 200 ? undefined : `${answer.status} ${JSON.stringify(answer.body)}`;
      reads.push({ sentAt, latencyMs: performance.now() - started, failure });
    }
  };
  const load = [...Array.from({ length: options.writers }, (_, w) => writer(w)), ...Array.from({ length: options.readers }, reader)];
  const acknowledged = () => writes.filter((write) => write.code === undefined);

  try {
    const loadStartedAt = Date.now();
    await until(() => acknowledged().length >= options.writesBeforeKill && Date.now() - loadStartedAt >= (options.loadBeforeKillMs ?? 0), "writes before the kill");
    const killStartedAt = Date.now();
    await pair.killPrimary();
    const killedAt = Date.now();
    await until(async () => (await topologyOf(gateway, cluster)).primary === null, "the gateway to report no primary");
    const noPrimaryAt = Date.now();
    await pair.promoteStandby();
    const promotedAt = Date.now();
    await until(() => writes.some((write) => write.code === undefined && write.sentAt > promotedAt), "writes to resume");
    const resumedAt = Date.now();
    await until(() => Date.now() >= resumedAt + options.afterResumeMs, "the load after the resumption");
    stop = true;
    await Promise.all(load);

    const after = await topologyOf(gateway, cluster);
    // The gateway keeps only its recent records: the run's are those it did not have before.
    const added = after.failovers.filter((record) => !before.failovers.some((earlier) => earlier.startedAt === record.startedAt && earlier.reason === record.reason));
    const record = after.failovers.at(-1);
    const primarySeenAt = record?.resolvedAt === undefined ? undefined : Date.parse(record.resolvedAt);
    const present = new Set((await pair.queryPrimary<{ id: string }>(pair.dialect.ids)).map((row) => row.id));
    const ackedAfterSeen = primarySeenAt === undefined ? [] : acknowledged().filter((write) => write.answeredAt >= primarySeenAt);
    return {
      writes,
      reads,
      lost: acknowledged()
        .filter((write) => !present.has(write.id))
        .map((write) => write.id),
      killStartedAt,
      killedAt,
      noPrimaryAt,
      promotedAt,
      primarySeenAt,
      firstWriteAfterSeenAt: ackedAfterSeen.length === 0 ? undefined : Math.min(...ackedAfterSeen.map((write) => write.answeredAt)),
      failoversAdded: added.length,
      failoversRecorded: added,
      newPrimary: after.primary ?? undefined,
      promotedPoolRetired: (after.endpoints.find((endpoint) => endpoint.name === promotedName)?.pool.retired ?? 0) - retiredBefore,
    };
  } finally {
    stop = true;
    await Promise.all(load);
  }
}
