/**
 * Picks the endpoint for a request: writes to the primary (waiting for one during a failover, within
 * the caller's deadline); reads to the replica with the fewest outstanding requests among those that
 * are healthy, not banned, fresh enough for the request's staleness bound and past its consistency
 * token; else the primary; with no primary known, any reachable replica still serves plain reads.
 */
import type { Engine } from "../engines/engine.js";
import { GatewayError } from "../errors.js";
import { endWith, startSpan } from "../tracing/request-trace.js";
import type { Clock } from "../clock.js";
import type { Endpoint } from "../topology/endpoint.js";
import type { Topology } from "../topology/topology.js";
import type { Intent } from "../../schemas/query.js";

export interface RouteRequest {
  intent: Intent;
  /** Position a replica must have replayed (from an earlier write's response). */
  consistencyToken?: string | undefined;
  /** Largest replica lag the caller accepts. */
  maxStalenessMs?: number | undefined;
  /** Clock time after which waiting is pointless: the caller's own timeout. */
  deadline: number;
}

export interface RouterSettings {
  tokenWaitMs: number;
  failoverWaitMs: number;
}

/**
 * A traced request's routing decision, as a span of no length: the endpoint and why (undefined: none
 * could be chosen without waiting, and route() waits). Answers the endpoint.
 */
function traceRoute(request: RouteRequest, endpoint: Endpoint, reason: string): Endpoint;
function traceRoute(request: RouteRequest, endpoint: Endpoint | undefined, reason: string): Endpoint | undefined;
function traceRoute(request: RouteRequest, endpoint: Endpoint | undefined, reason: string): Endpoint | undefined {
  const span = startSpan("poolgate.route");
  if (span === undefined) return endpoint;
  span.setAttribute("poolgate.route.intent", request.intent);
  span.setAttribute("poolgate.route.reason", endpoint === undefined ? "none without waiting" : reason);
  if (endpoint !== undefined) {
    span.setAttribute("poolgate.route.endpoint", endpoint.name);
    span.setAttribute("poolgate.route.role", endpoint.role);
  }
  span.end();
  return endpoint;
}

/** How often a read waiting for its consistency token re-checks the replicas. */
const TOKEN_POLL_MS = 5;

export class Router {
  private turn = 0;

  constructor(
    private readonly topology: Topology,
    private readonly engine: Engine,
    private readonly settings: RouterSettings,
    private readonly clock: Clock,
  ) {}

  /** Passes a failover sign (a demoted or lost primary) about the endpoint `about` on to the topology. */
  signalFailover(reason: string, about?: Endpoint): void {
    this.topology.signalFailover(reason, about);
  }

  isPosition(token: string): boolean {
    return this.engine.isPosition(token);
  }

  /** The endpoint for a request, waiting (within its deadline) where routeNow has none. */
  async route(request: RouteRequest): Promise<Endpoint> {
    const now = this.routeNow(request);
    if (now) return now;
    if (request.intent === "read" && request.consistencyToken) {
      const replica = await this.waitForToken(request);
      if (replica) return traceRoute(request, replica, "a replica replayed the consistency token");
      const primary = this.topology.primary();
      if (primary) return traceRoute(request, primary, "no replica replayed the consistency token in time");
    }
    return traceRoute(request, await this.primary(request.deadline), "the primary, after waiting for one");
  }

  /**
   * The endpoint for a request when it can be chosen without waiting — on the hot path, with no
   * promise — else undefined, and route() waits: for a primary during a failover, or for a replica
   * to replay a read's consistency token (a replica is preferred over the primary while it may catch up).
   */
  routeNow(request: RouteRequest): Endpoint | undefined {
    if (request.intent === "write") return traceRoute(request, this.topology.primary(), "a write goes to the primary");
    const replica = this.freshReplica(request);
    if (replica || request.consistencyToken) return traceRoute(request, replica, "the least busy replica fresh enough");
    const primary = this.topology.primary();
    if (primary || request.maxStalenessMs !== undefined) return traceRoute(request, primary, "no replica fresh enough: the primary");
    // The primary is gone: plain reads go on from any replica that answers, lagging or not.
    const reachable = this.topology.endpoints.filter((endpoint) => endpoint.healthy && endpoint.role === "replica");
    return traceRoute(request, reachable.length > 0 ? this.leastOutstanding(reachable) : undefined, "no primary: any reachable replica");
  }

  async primary(deadline: number): Promise<Endpoint> {
    const known = this.topology.primary();
    if (known) return known;
    const waitUntil = Math.min(deadline, this.clock.now() + this.settings.failoverWaitMs);
    // The failover hold: a write (or a read with no replica) waits here for a primary.
    const span = startSpan("poolgate.failover_hold");
    span?.setAttribute("poolgate.failover.wait_limit_ms", Math.max(0, waitUntil - this.clock.now()));
    const waiting = this.topology.waitForPrimary(waitUntil);
    const primary = await (span === undefined ? waiting : endWith(span, waiting, (found, ended) => ended.setAttribute("poolgate.failover.found", found !== undefined)));
    if (primary) return primary;
    throw new GatewayError("PRIMARY_UNAVAILABLE", "no primary became available in time (failover in progress); nothing was applied", {
      final: true,
      retryAfterS: 1,
    });
  }

  private freshReplica(request: RouteRequest): Endpoint | undefined {
    const candidates = this.topology.readReplicas().filter((endpoint) => this.isFreshEnough(endpoint, request));
    return candidates.length > 0 ? this.leastOutstanding(candidates) : undefined;
  }

  private isFreshEnough(endpoint: Endpoint, request: RouteRequest): boolean {
    // Staleness at the moment of the read (lag.ts, appliedThroughAt), not the lag the last check saw.
    if (request.maxStalenessMs !== undefined && (endpoint.appliedThroughAt === null || this.clock.now() - endpoint.appliedThroughAt > request.maxStalenessMs)) return false;
    if (request.consistencyToken === undefined) return true;
    return endpoint.position !== null && this.engine.comparePositions(endpoint.position, request.consistencyToken) >= 0;
  }

  /** Gives replicas up to tokenWaitMs to replay past the token, re-checking them meanwhile. */
  private async waitForToken(request: RouteRequest): Promise<Endpoint | undefined> {
    if (this.topology.readReplicas().length === 0) return undefined;
    const until = Math.min(request.deadline, this.clock.now() + this.settings.tokenWaitMs);
    while (this.clock.now() < until) {
      await Promise.all([this.topology.checkAll(), this.clock.sleep(TOKEN_POLL_MS)]);
      const replica = this.freshReplica(request);
      if (replica) return replica;
    }
    return undefined;
  }

  /** Fewest requests in flight; ties rotate so that sequential callers spread too. */
  private leastOutstanding(endpoints: Endpoint[]): Endpoint {
    const start = this.turn++ % endpoints.length;
    let best = endpoints[start] as Endpoint;
    for (let i = 1; i < endpoints.length; i++) {
      const candidate = endpoints[(start + i) % endpoints.length] as Endpoint;
      if (candidate.outstanding < best.outstanding) best = candidate;
    }
    return best;
  }
}
