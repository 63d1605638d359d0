/**
 * Tells every gateway task to look at its topology at once when RDS reports a failover, a reboot, a
 * patch or a switchover (EventBridge, source aws.rds; the CDK stack's failover-events.ts lists the
 * event IDs). The tasks are listed from ECS and each is called directly, since one call through the
 * load balancer would reach only one of them. Events are best effort and may arrive late or out of
 * order: they only speed things up; the gateway's own monitor stays the source of truth.
 *
 * A task that cannot be reached fails the invocation (after the others were refreshed), so Lambda
 * retries it and, in the end, the dead-letter queue keeps the event. The call is an operator route
 * (`POST /v1/admin/topology/refresh`), which the client SDK does not offer: it is signed with the
 * SDK's `iamAuth`.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { correlationPaths, search } from "@aws-lambda-powertools/logger/correlationId";
import { MetricUnit, Metrics } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { Tracer } from "@aws-lambda-powertools/tracer";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import { ECSClient } from "@aws-sdk/client-ecs";
import middy from "@middy/core";
import type { Context, EventBridgeEvent } from "aws-lambda";
import { z } from "zod";
import { iamAuth, POOLGATE_AUTH_HEADER } from "@poolgate/client/iam";
import { correlationHeader } from "../shared/correlation-header.js";
import { gatewayTasksFromEnv, listGatewayTaskUrls } from "../shared/gateway-tasks.js";

const env = z
  .object({
    POOLGATE_URL: z.url(),
    POOLGATE_CLUSTER: z.string().min(1).optional(),
    /** The gateway's auth.iam.audience: the refresh carries a proof of this function's IAM role. */
    POOLGATE_AUDIENCE: z.string().min(1).optional(),
  })
  .parse(process.env);
const tasks = gatewayTasksFromEnv(process.env);
const auth = env.POOLGATE_AUDIENCE ? iamAuth({ audience: env.POOLGATE_AUDIENCE }) : undefined;
const logger = new Logger({ serviceName: "poolgate-failover-hook", correlationIdSearchFn: search });
const metrics = new Metrics({ namespace: "Poolgate", serviceName: "poolgate-failover-hook" });
const tracer = new Tracer({ serviceName: "poolgate-failover-hook" });
const ecs = tasks ? tracer.captureAWSv3Client(new ECSClient({})) : undefined;

/** The detail of an RDS event (cluster, instance or blue/green). */
interface RdsEventDetail {
  EventID?: string;
  SourceIdentifier?: string;
  Message?: string;
}

/** What one task answered. */
export interface TaskRefresh {
  url: string;
  primary?: string | null;
  error?: string;
}

export interface HookResult {
  refreshed: number;
  tasks: TaskRefresh[];
}

async function refresh(url: string, context: Context): Promise<TaskRefresh> {
  const response = await fetch(new URL("/v1/admin/topology/refresh", url), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      // The gateway logs this request with the event's id as its correlation id.
      ...correlationHeader(logger, context),
      ...(auth ? { [POOLGATE_AUTH_HEADER]: await auth.header() } : {}),
    },
    body: JSON.stringify(env.POOLGATE_CLUSTER ? { cluster: env.POOLGATE_CLUSTER } : {}),
    signal: AbortSignal.timeout(Math.max(1000, Math.min(5000, context.getRemainingTimeInMillis() - 500))),
  });
  if (!response.ok) throw new Error(`answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  const topology = (await response.json()) as { clusters: Record<string, { primary: string | null }> };
  return { url, primary: Object.values(topology.clusters)[0]?.primary ?? null };
}

async function onRdsEvent(event: EventBridgeEvent<string, RdsEventDetail>, context: Context): Promise<HookResult> {
  const detail = { eventId: event.detail.EventID, source: event.detail.SourceIdentifier, message: event.detail.Message };
  tracer.putAnnotation("rdsEvent", event.detail.EventID ?? "unknown");
  const urls = tasks && ecs ? await listGatewayTaskUrls(ecs, tasks) : [env.POOLGATE_URL];
  if (urls.length === 0) throw new Error(`no running task in the gateway's ECS service ${tasks?.service ?? ""}`);
  const outcomes = await Promise.all(urls.map((url) => refresh(url, context).catch((err: unknown): TaskRefresh => ({ url, error: err instanceof Error ? err.message : String(err) }))));
  const failed = outcomes.filter((outcome) => outcome.error !== undefined);
  metrics.addMetric("TasksRefreshed", MetricUnit.Count, outcomes.length - failed.length);
  metrics.addMetric("TasksNotRefreshed", MetricUnit.Count, failed.length);
  if (failed.length > 0) {
    logger.error("topology refresh failed on some tasks", { ...detail, failed });
    throw new Error(`the topology refresh failed on ${failed.length} of ${outcomes.length} gateway tasks`);
  }
  logger.info("topology refreshed on every task after an RDS event", { ...detail, tasks: outcomes });
  return { refreshed: outcomes.length, tasks: outcomes };
}

/** The Lambda entry point: Powertools logger (context, correlation id: the event's id), metrics (cold start) and tracer (a handler segment). */
export const handler = middy(onRdsEvent)
  .use(captureLambdaHandler(tracer))
  .use(injectLambdaContext(logger, { correlationIdPath: correlationPaths.EVENT_BRIDGE, resetKeys: true }))
  .use(logMetrics(metrics, { captureColdStartMetric: true }));
