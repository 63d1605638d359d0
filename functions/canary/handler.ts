/**
 * The failover health check: on a schedule it writes a row through Poolgate, reads it back with the
 * write's consistency token, and emits success and latency metrics (CloudWatch EMF through Powertools).
 * An alarm on CanarySuccess catches a gateway or database that stopped taking writes, such as a
 * failover the gateway has not followed. A failed check also fails the invocation.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { MetricUnit, Metrics } from "@aws-lambda-powertools/metrics";
import { Tracer } from "@aws-lambda-powertools/tracer";
import type { Context, ScheduledEvent } from "aws-lambda";
import { z } from "zod";
import { createClient, iamAuth, PoolgateError } from "../../client/index.js";

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

/** One row per canary function: the check needs no growing table. */
const UPSERT =
  env.POOLGATE_ENGINE === "mysql"
    ? `insert into ${env.CANARY_TABLE} (id, marker, written_at) values (1, ?, now()) on duplicate key update marker = values(marker), written_at = values(written_at)`
    : `insert into ${env.CANARY_TABLE} (id, marker, written_at) values (1, $1, now()) on conflict (id) do update set marker = excluded.marker, written_at = excluded.written_at`;

const logger = new Logger({ serviceName: "poolgate-canary" });
const metrics = new Metrics({ namespace: "Poolgate", serviceName: "poolgate-canary" });
const tracer = new Tracer({ serviceName: "poolgate-canary" });
let remaining: () => number = () => 10_000;
const db = createClient({
  url: env.POOLGATE_URL,
  ...(env.POOLGATE_CLUSTER ? { cluster: env.POOLGATE_CLUSTER } : {}),
  ...(env.POOLGATE_AUDIENCE ? { sign: iamAuth({ audience: env.POOLGATE_AUDIENCE }) } : {}),
  deadline: () => remaining(),
  // A health check reports what it sees: one quick retry of what the gateway calls retryable, not a long wait.
  retry: { maxAttempts: 2, baseDelayMs: 100 },
});

/** What one check found. */
export interface CanaryResult {
  ok: boolean;
  writeMs: number;
  readMs: number;
  totalMs: number;
}

/** The Lambda entry point. */
export async function handler(event: ScheduledEvent, context: Context): Promise<CanaryResult> {
  remaining = () => context.getRemainingTimeInMillis();
  logger.addContext(context);
  const started = performance.now();
  const marker = `${event.id ?? context.awsRequestId}:${Date.now()}`;
  let writeMs = 0;
  let readMs = 0;
  try {
    const write = performance.now();
    await db.query(UPSERT, [marker], { intent: "write" });
    writeMs = performance.now() - write;
    const read = performance.now();
    const { rows } = await db.query<{ marker: string }>(`select marker from ${env.CANARY_TABLE} where id = 1`, [], { intent: "read" });
    readMs = performance.now() - read;
    if (rows[0]?.marker !== marker) throw new Error(`read back ${JSON.stringify(rows[0]?.marker)} instead of the marker just written`);
    const totalMs = performance.now() - started;
    metrics.addMetric("CanarySuccess", MetricUnit.Count, 1);
    metrics.addMetric("CanaryWriteLatency", MetricUnit.Milliseconds, writeMs);
    metrics.addMetric("CanaryReadLatency", MetricUnit.Milliseconds, readMs);
    metrics.addMetric("CanaryLatency", MetricUnit.Milliseconds, totalMs);
    tracer.putMetadata("canary", { writeMs, readMs });
    logger.info("canary passed", { writeMs, readMs, totalMs });
    return { ok: true, writeMs, readMs, totalMs };
  } catch (err) {
    const totalMs = performance.now() - started;
    const message = err instanceof Error ? err.message : String(err);
    metrics.addMetric("CanarySuccess", MetricUnit.Count, 0);
    metrics.addMetric("CanaryLatency", MetricUnit.Milliseconds, totalMs);
    logger.error("canary failed", { error: err as Error, code: err instanceof PoolgateError ? err.code : undefined, totalMs });
    throw new Error(`canary failed: ${message}`, { cause: err });
  } finally {
    metrics.publishStoredMetrics();
  }
}
