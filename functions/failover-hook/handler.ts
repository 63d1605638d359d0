/**
 * Tells the gateway to look at its topology at once when RDS reports a failover (EventBridge, source
 * aws.rds, RDS-EVENT-0069…0073). Events are best effort and may arrive late or out of order: they only
 * speed things up; the gateway's own monitor stays the source of truth.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import type { Context, EventBridgeEvent } from "aws-lambda";
import { z } from "zod";
import { iamAuth } from "../../client/index.js";

const env = z
  .object({
    POOLGATE_URL: z.url(),
    POOLGATE_CLUSTER: z.string().min(1).optional(),
    /** The gateway's auth.iam.audience: the refresh carries a proof of this function's IAM role. */
    POOLGATE_AUDIENCE: z.string().min(1).optional(),
  })
  .parse(process.env);
const auth = env.POOLGATE_AUDIENCE ? iamAuth({ audience: env.POOLGATE_AUDIENCE }) : undefined;
const logger = new Logger({ serviceName: "poolgate-failover-hook" });

interface RdsClusterEventDetail {
  EventID?: string;
  SourceIdentifier?: string;
  Message?: string;
}

/** The Lambda entry point. */
export async function handler(event: EventBridgeEvent<"RDS DB Cluster Event", RdsClusterEventDetail>, context: Context): Promise<{ refreshed: boolean; primary?: string | null }> {
  logger.addContext(context);
  const detail = { eventId: event.detail.EventID, cluster: event.detail.SourceIdentifier, message: event.detail.Message };
  const response = await fetch(new URL("/v1/admin/topology/refresh", env.POOLGATE_URL), {
    method: "POST",
    headers: { "content-type": "application/json", ...(auth ? { "x-poolgate-auth": await auth.header() } : {}) },
    body: JSON.stringify(env.POOLGATE_CLUSTER ? { cluster: env.POOLGATE_CLUSTER } : {}),
    signal: AbortSignal.timeout(Math.max(1000, context.getRemainingTimeInMillis() - 500)),
  });
  if (!response.ok) {
    logger.error("topology refresh failed", { ...detail, status: response.status, body: (await response.text()).slice(0, 500) });
    throw new Error(`the gateway answered ${response.status} to the topology refresh`);
  }
  const topology = (await response.json()) as { clusters: Record<string, { primary: string | null }> };
  const primary = Object.values(topology.clusters)[0]?.primary ?? null;
  logger.info("topology refreshed after an RDS event", { ...detail, primary });
  return { refreshed: true, primary };
}
