/**
 * The gateway's metrics in Prometheus form (prom-client), one registry per gateway (tests run several
 * in one process): requests by route, cluster, intent and outcome with latency histograms; per
 * endpoint pool gauges, acquire-wait histograms and connection churn; retries by reason; replica bans;
 * failovers and their durations; topology (role, health, lag); plus Node's process metrics. Events are
 * counted as they happen (the executors' retries, the monitors' bans and failovers); states, and what
 * the pools count themselves (acquire waits, churn), are read at scrape time.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Cluster } from "../clusters/cluster.js";
import type { GatewayEvents } from "../events.js";
import type { Pool } from "../pool/pool.js";
import { ACQUIRE_WAIT_BUCKETS_MS } from "../pool/stats.js";
import { LabelledHistogram } from "./labelled-histogram.js";
import type { Endpoint } from "../topology/endpoint.js";

/** What one answered request is counted by. */
export interface RequestLabels {
  /** The route's pattern (`/v1/query`, `/v1/transactions/:id/commit`), or "unmatched". */
  route: string;
  cluster: string;
  /** read, write, transaction, or none (no statement). */
  intent: string;
  /** "ok", or the registry code of the failure. */
  outcome: string;
}

const REQUEST_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const FAILOVER_BUCKETS_S = [0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120];

/** Running totals the status page and the EMF reporter read (cheaper than parsing the registry). */
export interface RequestTotals {
  requests: number;
  /** Answers with a 4xx status (the caller's mistakes and refusals). */
  clientErrors: number;
  /** Answers with a 5xx status (the gateway or the database could not serve). */
  serverErrors: number;
  retries: number;
  failovers: number;
  /** Reads that asked for the result cache, and those of them answered from it (hit or stale). */
  cacheReads: number;
  cacheHits: number;
}

/** Every pool, labelled by its name (the endpoint's, with the login for logins other than the read-write one). */
function* eachPool(clusters: () => Iterable<Cluster>): Iterable<{ cluster: string; pool: Pool }> {
  for (const cluster of clusters()) for (const { pool } of cluster.pools.all()) yield { cluster: cluster.name, pool };
}

/**
 * How often the event loop's delay is sampled (prom-client's eventLoopMonitoringPrecision; its default
 * is 10 ms). Each sample is a timer that wakes the process: at 10 ms an idle gateway woke about 200
 * times a second (two epoll waits per sample, strace) for nothing else. A stall of the loop longer than
 * this still shows in the lag metrics at its full length; only stalls shorter than it may go unseen,
 * and those in the first interval after a scrape (Node drops the first interval after the histogram's
 * reset, at any precision: the window is this long).
 */
const EVENT_LOOP_SAMPLE_MS = 100;

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly totals: RequestTotals = { requests: 0, clientErrors: 0, serverErrors: 0, retries: 0, failovers: 0, cacheReads: 0, cacheHits: 0 };
  /** The two histograms on the hot path are kept by hand (labelled-histogram.ts). */
  private readonly requestDuration: LabelledHistogram<keyof RequestLabels>;
  private readonly acquireWait: LabelledHistogram<"cluster" | "endpoint">;
  private readonly retries: Counter<"cluster" | "reason">;
  private readonly bans: Counter<"cluster" | "endpoint">;
  private readonly failovers: Counter<"cluster">;
  private readonly failoverDuration: Histogram<"cluster">;
  private readonly cacheReads: Counter<"cluster" | "outcome" | "reason">;
  private readonly cacheInvalidations: Counter<"cluster" | "confirmed">;
  /** Per endpoint, the pool's churn counters as last exported (they are read, not hooked). */
  private readonly churnSeen = new Map<string, { created: number; evicted: number; retired: number; resets: number }>();

  constructor(
    private readonly clusters: () => Iterable<Cluster>,
    events: GatewayEvents,
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "poolgate_", eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    this.requestDuration = new LabelledHistogram(
      "poolgate_request_duration_seconds",
      "Requests answered, by route, cluster, intent and outcome (ok or the error code), and how long they took",
      ["route", "cluster", "intent", "outcome"],
      REQUEST_BUCKETS_S,
      this.registry,
    );
    // Each pool counts its own acquire waits (pool/stats.ts, in the same buckets): read at scrape
    // time, so that lending a session costs no event and no second histogram.
    this.acquireWait = new LabelledHistogram(
      "poolgate_pool_acquire_wait_seconds",
      "How long requests waited for a pooled connection, per endpoint",
      ["cluster", "endpoint"],
      ACQUIRE_WAIT_BUCKETS_MS.map((ms) => ms / 1000),
      this.registry,
      () => {
        this.acquireWait.reset();
        for (const { cluster, pool } of eachPool(clusters)) {
          const { perBucket, sumMs, count } = pool.counters.acquireWaitCounts();
          this.acquireWait.setCounts({ cluster, endpoint: pool.name }, perBucket, sumMs / 1000, count);
        }
      },
    );
    this.retries = new Counter({ name: "poolgate_retries_total", help: "Work the gateway ran again, by the failure that caused it", labelNames: ["cluster", "reason"], registers });
    this.bans = new Counter({ name: "poolgate_replica_bans_total", help: "Replicas taken out of reads for replication lag", labelNames: ["cluster", "endpoint"], registers });
    this.failovers = new Counter({ name: "poolgate_failovers_total", help: "Failovers followed to a new primary", labelNames: ["cluster"], registers });
    this.failoverDuration = new Histogram({
      name: "poolgate_failover_duration_seconds",
      help: "From the first sign of a failover to writes resuming on the new primary",
      labelNames: ["cluster"],
      buckets: FAILOVER_BUCKETS_S,
      registers,
    });
    this.cacheReads = new Counter({
      name: "poolgate_cache_reads_total",
      help: "Reads that asked for the result cache, by outcome (hit, stale, miss, bypass) and, for bypasses, reason",
      labelNames: ["cluster", "outcome", "reason"],
      registers,
    });
    this.cacheInvalidations = new Counter({
      name: "poolgate_cache_invalidations_total",
      help: "Writes that moved the result cache's generations on (confirmed=false: the store could not confirm it and stopped vouching)",
      labelNames: ["cluster", "confirmed"],
      registers,
    });
    new Gauge({
      name: "poolgate_cache_bytes",
      help: "Bytes of result-cache entries held in this task (memory store)",
      labelNames: ["cluster"],
      registers,
      collect() {
        this.reset();
        for (const cluster of clusters()) {
          const bytes = cluster.cache.bytes();
          if (bytes !== undefined) this.set({ cluster: cluster.name }, bytes);
        }
      },
    });
    this.registerStateGauges();
    this.listen(events);
  }

  /**
   * Counts an answered request. Only callers' requests go into the totals (the status page's own
   * polling, health checks and scrapes would otherwise show up as traffic).
   */
  observeRequest(labels: RequestLabels, status: number, seconds: number, fromCaller: boolean): void {
    this.requestDuration.observe(labels, seconds);
    if (!fromCaller) return;
    this.totals.requests++;
    if (status >= 500) this.totals.serverErrors++;
    else if (status >= 400) this.totals.clientErrors++;
  }

  /** Counts what the pools, leases and monitors tell the hub as it happens. */
  private listen(events: GatewayEvents): void {
    events.on("retry", ({ cluster, code }) => {
      this.retries.inc({ cluster, reason: code });
      this.totals.retries++;
    });
    events.on("cacheRead", ({ cluster, outcome, reason }) => {
      this.cacheReads.inc({ cluster, outcome, reason: reason ?? "" });
      this.totals.cacheReads++;
      if (outcome === "hit" || outcome === "stale") this.totals.cacheHits++;
    });
    events.on("cacheInvalidation", ({ cluster, confirmed }) => this.cacheInvalidations.inc({ cluster, confirmed: String(confirmed) }));
    events.on("replicaBanned", ({ cluster, endpoint }) => this.bans.inc({ cluster, endpoint: endpoint.name }));
    events.on("failoverResolved", ({ cluster, record }) => {
      this.failovers.inc({ cluster });
      this.totals.failovers++;
      if (record.durationMs !== undefined) this.failoverDuration.observe({ cluster }, record.durationMs / 1000);
    });
  }

  /** The exposition text for GET /metrics. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** Gauges read from the pools and the topology at scrape time. */
  private registerStateGauges(): void {
    const clusters = this.clusters;
    const registers = [this.registry];
    const each = function* () {
      for (const cluster of clusters()) for (const endpoint of cluster.endpoints) yield { cluster: cluster.name, endpoint };
    };
    /** One value per pool. */
    const perPool = (name: string, help: string, read: (pool: Pool) => number): void => {
      new Gauge({
        name,
        help,
        labelNames: ["cluster", "endpoint"],
        registers,
        collect() {
          this.reset();
          for (const { cluster, pool } of eachPool(clusters)) this.set({ cluster, endpoint: pool.name }, read(pool));
        },
      });
    };
    /** One value per endpoint (none where `read` answers undefined). */
    const perEndpoint = (name: string, help: string, read: (endpoint: Endpoint) => number | undefined): void => {
      new Gauge({
        name,
        help,
        labelNames: ["cluster", "endpoint"],
        registers,
        collect() {
          this.reset();
          for (const { cluster, endpoint } of each()) {
            const value = read(endpoint);
            if (value !== undefined) this.set({ cluster, endpoint: endpoint.name }, value);
          }
        },
      });
    };
    /** One value per cluster. */
    const perCluster = (name: string, help: string, read: (cluster: Cluster) => number): void => {
      new Gauge({
        name,
        help,
        labelNames: ["cluster"],
        registers,
        collect() {
          this.reset();
          for (const cluster of clusters()) this.set({ cluster: cluster.name }, read(cluster));
        },
      });
    };

    new Gauge({
      name: "poolgate_pool_connections",
      help: "Pooled connections per endpoint by state: active (lent), idle, pending (being opened)",
      labelNames: ["cluster", "endpoint", "state"],
      registers,
      collect() {
        this.reset();
        for (const { cluster, pool } of eachPool(clusters)) {
          const stats = pool.stats();
          for (const [state, value] of [["active", stats.active], ["idle", stats.idle], ["pending", stats.pendingCreates]] as const) {
            this.set({ cluster, endpoint: pool.name, state }, value);
          }
        }
      },
    });
    perPool("poolgate_pool_waiting", "Requests waiting for a connection, per endpoint", (pool) => pool.stats().waiting);
    perPool("poolgate_pool_max_connections", "The pool's maximum size, per endpoint", (pool) => pool.settings.maxSize);
    const churnSeen = this.churnSeen;
    new Counter({
      name: "poolgate_pool_connection_events_total",
      help: "Connections opened, evicted (broken) and retired (lifetime, idle timeout), and full resets before another principal, per endpoint",
      labelNames: ["cluster", "endpoint", "event"],
      registers,
      collect() {
        for (const { cluster, pool } of eachPool(clusters)) {
          const key = `${cluster}\n${pool.name}`;
          const stats = pool.stats();
          const seen = churnSeen.get(key) ?? { created: 0, evicted: 0, retired: 0, resets: 0 };
          for (const event of ["created", "evicted", "retired", "resets"] as const) {
            const delta = stats[event] - seen[event];
            if (delta > 0) this.inc({ cluster, endpoint: pool.name, event }, delta);
          }
          churnSeen.set(key, { created: stats.created, evicted: stats.evicted, retired: stats.retired, resets: stats.resets });
        }
      },
    });
    perEndpoint("poolgate_endpoint_up", "1 when the monitor's last check reached the endpoint", (endpoint) => (endpoint.healthy ? 1 : 0));
    new Gauge({
      name: "poolgate_endpoint_role",
      help: "1 for the role the endpoint has now (primary, replica or unknown)",
      labelNames: ["cluster", "endpoint", "role"],
      registers,
      collect() {
        this.reset();
        for (const { cluster, endpoint } of each()) this.set({ cluster, endpoint: endpoint.name, role: endpoint.role }, 1);
      },
    });
    perEndpoint("poolgate_endpoint_banned", "1 while a replica gets no reads because it lags", (endpoint) => (endpoint.banReason === null ? 0 : 1));
    perEndpoint("poolgate_replica_lag_seconds", "Estimated replication lag of each replica (0 when caught up)", (endpoint) =>
      endpoint.role === "replica" && endpoint.lagMs !== null ? endpoint.lagMs / 1000 : undefined,
    );
    perCluster("poolgate_cluster_has_primary", "1 while the cluster has a primary; 0 during a failover", (cluster) => (cluster.topology.primary() ? 1 : 0));
    perCluster("poolgate_transactions_open", "Interactive transactions open, per cluster", (cluster) => cluster.transactions.size);
  }
}
