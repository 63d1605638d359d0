/**
 * How long a gateway task takes to become ready, and so how long ECS must ignore the load balancer's
 * health checks of a new task (the service's health-check grace period) and its own container
 * check's failures (the check's start period).
 *
 * The gateway listens first and answers /readyz 503 "starting" until its pools warm (gateway/main.ts):
 *   process start → listening: Node's start-up and the gateway's modules (measured below), the
 *     secrets' first read, then one topology discovery and one check of every endpoint, each bounded
 *     by topology.checkTimeoutMs (the stack's configuration: 1 s) even when the database is down;
 *   listening → ready: the pools' first connections, bounded by pool.acquireTimeoutMs (5 s): a task
 *     is ready then, warm or not;
 *   ready → healthy target: the target group's healthy threshold times its interval.
 * A database outage at start therefore delays readiness by a bounded time and never makes ECS replace
 * tasks in a loop.
 */
import { Duration } from "aws-cdk-lib";

/**
 * `node dist/gateway/main.js` from exec to "poolgate listening", on the development machine (2 cores
 * shared with other work, heavily loaded) against the local PostgreSQL, median of 5 runs (9.2, 10.3,
 * 12.1, 13.1 and 25.3 s; most of it loading modules: the listening line's own startMs, from main()
 * to listening, was 1.2-4.0 s). docs/operating.md says how to measure it on a task.
 */
export const MEASURED_START_TO_LISTEN_MS = 12_000;

/** Reading the secrets (logins, operator token) from Secrets Manager at start, through the VPC endpoint. */
const SECRETS_READ_MS = 2000;
/** The slower CPU of a small Fargate task and a cold image cache. */
const SAFETY_FACTOR = 2;

export interface StartUpBounds {
  /** topology.checkTimeoutMs: discovery and the first check of every endpoint, each. */
  checkTimeoutMs: number;
  /** pool.acquireTimeoutMs: the pools' warm-up bound. */
  acquireTimeoutMs: number;
  /** The target group's health check: interval and healthy threshold. */
  healthCheckInterval: Duration;
  healthyThresholdCount: number;
}

/** The longest a task takes from start to ready, as main.ts bounds it. */
export function readyWithin(bounds: StartUpBounds): Duration {
  const toListenMs = SAFETY_FACTOR * MEASURED_START_TO_LISTEN_MS + SECRETS_READ_MS + 2 * bounds.checkTimeoutMs;
  return Duration.millis(toListenMs + bounds.acquireTimeoutMs);
}

/** The service's health-check grace period: ready, then healthy in the target group, rounded up to whole seconds. */
export function healthCheckGrace(bounds: StartUpBounds): Duration {
  const ms = readyWithin(bounds).toMilliseconds() + bounds.healthyThresholdCount * bounds.healthCheckInterval.toMilliseconds();
  return Duration.seconds(Math.ceil(ms / 1000));
}
