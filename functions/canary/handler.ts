/**
 * The failover health check: on a schedule it writes a row through Poolgate and reads it back with the
 * write's consistency token, or from the writer when the write has none (read-back.ts) — through the load balancer, as callers do, and then on every gateway task
 * directly (listed from ECS), so a task that stopped following the database is caught within a run,
 * not after the load balancer happens to pick it. Each check uses a client of its own, made for the
 * run: no stickiness cookie or warm connection carries one task over to the next run.
 *
 * Metrics (CloudWatch EMF through Powertools): CanarySuccess (1 when every check passed, else 0),
 * CanaryLatency (the whole run), CanaryWriteLatency and CanaryReadLatency (through the load balancer),
 * CanaryChecks and CanaryChecksFailed. A failed check also fails the invocation.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { correlationPaths, search } from "@aws-lambda-powertools/logger/correlationId";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit, Metrics } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { Tracer } from "@aws-lambda-powertools/tracer";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import { ECSClient } from "@aws-sdk/client-ecs";
import middy from "@middy/core";
import type { Context, ScheduledEvent } from "aws-lambda";
import { z } from "zod";
import { createClient, PoolgateError } from "@poolgate/client";
import { iamAuth } from "@poolgate/client/iam";
import { correlationHeader } from "../shared/correlation-header.js";
import { gatewayTasksFromEnv, listGatewayTaskUrls } from "../shared/gateway-tasks.js";
import { type ReadBackPath, readBackOptions } from "./read-back.js";

const env = z
  .object({
    POOLGATE_URL: z.url(),
    POOLGATE_CLUSTER: z.string().min(1).optional(),
    /** The gateway's auth.iam.audience: calls carry a proof of this function's IAM role. */
    POOLGATE_AUDIENCE: z.string().min(1).optional(),
    CANARY_TABLE: z.string().regex(/^[a-z_][a-z0-9_]*$/).default("poolgate_canary"),
    /** The cluster's engine: the upsert is written in its dialect. */
    POOLGATE_ENGINE: z.enum(["postgres", "mysql"]).default("postgres"),
  })
  .parse(process.env);
const tasks = gatewayTasksFromEnv(process.env);

/** One row per canary function: the check needs no growing table. */
const UPSERT =
  env.POOLGATE_ENGINE === "mysql"
    ? `insert into ${env.CANARY_TABLE} (id, marker, written_at) values (1, ?, now()) on duplicate key update marker = values(marker), written_at = values(written_at)`
    : `insert into ${env.CANARY_TABLE} (id, marker, written_at) values (1, $1, now()) on conflict (id) do update set marker = excluded.marker, written_at = excluded.written_at`;

const logger = new Logger({ serviceName: "poolgate-canary", correlationIdSearchFn: search });
const metrics = new Metrics({ namespace: "Poolgate", serviceName: "poolgate-canary" });
const tracer = new Tracer({ serviceName: "poolgate-canary" });
const auth = env.POOLGATE_AUDIENCE ? iamAuth({ audience: env.POOLGATE_AUDIENCE }) : undefined;
const ecs = tasks ? tracer.captureAWSv3Client(new ECSClient({})) : undefined;

/** One check: where, and how it went. */
export interface CanaryCheck {
  target: string;
  ok: boolean;
  writeMs: number;
  readMs: number;
  error?: string;
  code?: string;
  /** How the marker was read back (read-back.ts). */
  readBy?: ReadBackPath;
}

/** What one run found. */
export interface CanaryResult {
  ok: boolean;
  /** Through the load balancer (the first check). */
  writeMs: number;
  readMs: number;
  totalMs: number;
  checks: CanaryCheck[];
}

/** Writes a marker through `url` with a client made for this check alone, and reads it back. */
async function check(target: string, url: string, marker: string, context: Context): Promise<CanaryCheck> {
  const db = createClient({
    url,
    ...(env.POOLGATE_CLUSTER ? { cluster: env.POOLGATE_CLUSTER } : {}),
    // The proof of the function's role; the correlation id for the gateway's log.
    ...(auth ? { sign: auth } : {}),
    headers: correlationHeader(logger, context),
    deadline: () => context.getRemainingTimeInMillis(),
    // A health check reports what it sees: one quick retry of what the gateway calls retryable, not a long wait.
    retry: { maxAttempts: 2, baseDelayMs: 100 },
  });
  let writeMs = 0;
  let readMs = 0;
  try {
    const write = performance.now();
    const written = await db.query(UPSERT, [marker], { intent: "write" });
    writeMs = performance.now() - write;
    const read = performance.now();
    const readBack = readBackOptions(written.consistencyToken);
    const { rows } = await db.query<{ marker: string }>(`select marker from ${env.CANARY_TABLE} where id = 1`, [], readBack.options);
    readMs = performance.now() - read;
    if (rows[0]?.marker !== marker) throw new Error(`read back ${JSON.stringify(rows[0]?.marker)} instead of the marker just written (read by ${readBack.path})`);
    return { target, ok: true, writeMs, readMs, readBy: readBack.path };
  } catch (err) {
    return { target, ok: false, writeMs, readMs, error: err instanceof Error ? err.message : String(err), ...(err instanceof PoolgateError ? { code: err.code } : {}) };
  } finally {
    await db.close().catch(() => undefined);
  }
}

async function runChecks(event: ScheduledEvent, context: Context): Promise<CanaryResult> {
  const started = performance.now();
  const checks: CanaryCheck[] = [];
  try {
    const targets: [string, string][] = [["load balancer", env.POOLGATE_URL]];
    if (tasks && ecs) {
      const urls = await listGatewayTaskUrls(ecs, tasks);
      if (urls.length === 0) throw new Error(`no ready task in the gateway's ECS service ${tasks.service}`);
      targets.push(...urls.map((url): [string, string] => [`task ${new URL(url).host}`, url]));
    }
    // One after the other: each check writes the canary's one row and must read back its own marker.
    for (const [target, url] of targets) checks.push(await check(target, url, `${event.id ?? context.awsRequestId}:${target}:${Date.now()}`, context));
  } catch (err) {
    checks.push({ target: "task list", ok: false, writeMs: 0, readMs: 0, error: err instanceof Error ? err.message : String(err) });
  }
  const totalMs = performance.now() - started;
  const failed = checks.filter((entry) => !entry.ok);
  const [first] = checks;
  metrics.addMetric("CanarySuccess", MetricUnit.Count, failed.length === 0 ? 1 : 0);
  metrics.addMetric("CanaryLatency", MetricUnit.Milliseconds, totalMs);
  metrics.addMetric("CanaryChecks", MetricUnit.Count, checks.length);
  metrics.addMetric("CanaryChecksFailed", MetricUnit.Count, failed.length);
  if (first?.ok) {
    metrics.addMetric("CanaryWriteLatency", MetricUnit.Milliseconds, first.writeMs);
    metrics.addMetric("CanaryReadLatency", MetricUnit.Milliseconds, first.readMs);
  }
  tracer.putMetadata("canary", { checks });
  if (failed.length > 0) {
    logger.error("canary failed", { failed, code: failed[0]?.code, totalMs });
    throw new Error(`canary failed: ${failed.map((entry) => `${entry.target}: ${entry.error ?? "failed"}`).join("; ")}`);
  }
  logger.info("canary passed", { checks, totalMs });
  return { ok: true, writeMs: first?.writeMs ?? 0, readMs: first?.readMs ?? 0, totalMs, checks };
}

/** The Lambda entry point: Powertools logger (context, correlation id: the event's id), metrics (cold start) and tracer (a handler segment). */
export const handler = middy(runChecks)
  .use(captureLambdaHandler(tracer))
  .use(injectLambdaContext(logger, { correlationIdPath: correlationPaths.EVENT_BRIDGE, resetKeys: true }))
  .use(logMetrics(metrics, { captureColdStartMetric: true }));
