/**
 * The `lifecycle` part of `npm run bench` (issue 35), the pause (switchover-bench.ts has the switchover): an idle cluster
 * (clusters.<name>.idleToZero) in front of the pausing-instance stand-in (test/support/pausing-instance.ts)
 * on each engine and for both answers of a paused instance (held, refused). Once the stand-in has
 * paused, CALLERS requests arrive at once with a deadline longer than the resume: resumeHeldMs is how
 * long the first of them waited for its answer (the resume, as the caller sees it), failedDuringResume
 * how many of them failed (the target: none).
 */
import http from "node:http";
import { startTestGateway } from "../test/support/gateway.js";
import { createTestMysqlDatabase } from "../test/support/mysql.js";
import { type PausedConnectBehaviour, startPausingInstance } from "../test/support/pausing-instance.js";
import { createTestDatabase } from "../test/support/postgres.js";
import type { ResumeFigures, ResumeRow } from "./results.js";

type Step = <T>(label: string, estimateS: number, work: () => Promise<T>) => Promise<T>;

/**
 * The stand-in pauses this long after its last connection closed: longer than the pool's connect
 * backoff (at most 1 s), as Aurora's SecondsUntilAutoPause (300 s at least) is, so that a refused
 * attempt's retry meets the resumed instance rather than a new pause.
 */
const PAUSE_AFTER_MS = 1500;
/** The stand-in's resume (Aurora's is about 15 s; shorter here so the part stays short). */
const RESUME_MS = 2000;
const CALLERS = 20;

interface Target {
  engine: ResumeRow["engine"];
  createDatabase(): Promise<{ url: string; drop(): Promise<void> }>;
}

const TARGETS: Target[] = [
  { engine: "postgres", createDatabase: async () => createTestDatabase() },
  { engine: "mysql", createDatabase: async () => createTestMysqlDatabase() },
];

/** A POST on a connection of its own, so that the callers reach the gateway at once. */
function post(baseUrl: string, body: unknown): Promise<number> {
  const text = JSON.stringify(body);
  return new Promise((resolve) => {
    const request = http.request(new URL("/v1/query", baseUrl), { method: "POST", agent: false, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text) } });
    request.on("response", (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode ?? 0));
      response.on("error", () => resolve(0));
    });
    request.on("error", () => resolve(0));
    request.end(text);
  });
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function measure(target: Target, whilePaused: PausedConnectBehaviour): Promise<ResumeRow> {
  const database = await target.createDatabase();
  const instance = await startPausingInstance({ targetPort: Number(new URL(database.url).port), pauseAfterMs: PAUSE_AFTER_MS, resumeMs: RESUME_MS, whilePaused });
  const gw = await startTestGateway({
    clusters: { default: { writerUrl: instance.endpointUrl(database.url), idleToZero: { quietMs: 300, resumeTimeoutMs: 20000 } } },
    pool: { maxSize: 10 },
  });
  try {
    if ((await post(gw.baseUrl, { sql: "select 1 as one" })) !== 200) throw new Error("the warm-up request failed");
    await until(() => instance.state === "paused", 20000, "the stand-in to pause");
    const startedAt = performance.now();
    let firstAnsweredMs: number | undefined;
    const statuses = await Promise.all(
      Array.from({ length: CALLERS }, () =>
        post(gw.baseUrl, { sql: "select 1 as one", timeoutMs: 15000 }).then((status) => {
          firstAnsweredMs ??= performance.now() - startedAt;
          return status;
        }),
      ),
    );
    return {
      engine: target.engine,
      whilePaused,
      standInResumeMs: RESUME_MS,
      callers: CALLERS,
      resumeHeldMs: Math.round(firstAnsweredMs ?? Number.NaN),
      failedDuringResume: statuses.filter((status) => status !== 200).length,
    };
  } finally {
    await gw.stop();
    await instance.close();
    await database.drop();
  }
}

export async function runResumeBench(step: Step): Promise<ResumeFigures> {
  const resume: ResumeRow[] = [];
  for (const target of TARGETS) {
    for (const whilePaused of ["hold", "refuse"] as const) {
      resume.push(await step(`pause and resume: ${target.engine}, attempts ${whilePaused === "hold" ? "held" : "refused"}`, 6, () => measure(target, whilePaused)));
    }
  }
  return {
    resumeHeldMs: Math.max(...resume.map((row) => row.resumeHeldMs)),
    failedDuringResume: resume.reduce((sum, row) => sum + row.failedDuringResume, 0),
    resume,
  };
}
