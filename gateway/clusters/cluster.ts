/**
 * A configured cluster at run time, wired: its engine, one endpoint per configured writer/reader URL
 * (and per discovered instance), a pool per endpoint and database login, the topology that says which
 * is the primary, the router, and the executor and transaction registry on top. Only construction,
 * start and close live here; each behaviour is its owner's: sessions checked when opened and after a
 * role change (topology/checked-open.ts, topology/session-rechecks.ts), the instance list
 * (topology/instance-reconciler.ts), the idempotency record's admin sessions
 * (idempotency/admin-session.ts), the health report (cluster-health.ts).
 */
import type { HealthResponse } from "../../schemas/health.js";
import type { GatewayConfig } from "../config/schema.js";
import type { DatabaseAccess } from "../credentials/database-access.js";
import type { DatabaseCredentials } from "../credentials/database-credentials.js";
import { type LoginKey, READ_WRITE_LOGIN } from "../credentials/logins.js";
import type { Engine } from "../engines/engine.js";
import { engineForUrl } from "../engines/engine-for-url.js";
import { clusterEvents, GatewayEvents } from "../events.js";
import { Executor } from "../execution/executor.js";
import { Attempts } from "../execution/attempt.js";
import { StatementPipeline } from "../execution/pipeline.js";
import { StreamRunner } from "../execution/streams.js";
import { Planner } from "../execution/plan.js";
import { TransactionRegistry } from "../execution/transactions.js";
import { checkTableAtStart, lentAdminSession, primaryAdminSession } from "../idempotency/admin-session.js";
import { IdempotencyStore } from "../idempotency/store.js";
import { UNRESTRICTED } from "../execution/run-as.js";
import type { Logger } from "../logger.js";
import { type Clock, systemClock } from "../clock.js";
import { Pool } from "../pool/pool.js";
import { Router } from "../routing/router.js";
import { openChecked } from "../topology/checked-open.js";
import { clusterTopology } from "../topology/cluster-topology.js";
import type { DiscoverySettings } from "../topology/discovery.js";
import type { Endpoint } from "../topology/endpoint.js";
import type { InstanceReconciler } from "../topology/instance-reconciler.js";
import type { TopologyMonitor } from "../topology/monitor.js";
import { recheckSessionsOnRoleChange } from "../topology/session-rechecks.js";
import type { Topology } from "../topology/topology.js";
import { PoolSet } from "../pool/pool-set.js";
import { MemoryStore } from "../cache/memory-store.js";
import { ResultCache } from "../cache/result-cache.js";
import { clusterCacheSettings } from "../cache/settings.js";
import { clusterHealth } from "./cluster-health.js";
import { IdleToZero } from "./idle-to-zero.js";
import { loginPoolSettings, poolSettings } from "./pool-settings.js";
import type { CacheStore } from "../cache/store.js";

/** Time allowed for the server to answer a CancelRequest before the socket is cut. */
const CANCEL_GRACE_MS = 2000;

export interface ClusterEndpoints {
  writerUrl: string;
  readerUrls: readonly string[];
  discovery?: DiscoverySettings | undefined;
  /** Credentials source and TLS for every session of the cluster, and its other logins; default: as the URLs say. */
  access?: DatabaseAccess | undefined;
}

/** What a cluster is given besides its configuration: time, the event hub, transaction ids. */
export interface ClusterWiring {
  clock?: Clock | undefined;
  /** The gateway's event hub (metrics listen there); default: one of the cluster's own. */
  events?: GatewayEvents | undefined;
  /** Transaction ids naming this task (peers); default: plain UUIDs. */
  mintTransactionId?: (() => string) | undefined;
  /** Where result-cache entries and generations live (shared by the gateway's clusters); default: this cluster's own memory store. */
  cacheStore?: CacheStore | undefined;
}

export class Cluster {
  readonly engine: Engine;
  /** Writer first; discovered instances join and leave (the topology keeps the list). */
  readonly endpoints: readonly Endpoint[];
  /** A pool per endpoint and login. */
  readonly pools: PoolSet<Endpoint>;
  readonly topology: Topology;
  /** The topology's monitor (every cluster but the embedded database). */
  readonly monitor: TopologyMonitor | undefined;
  readonly router: Router;
  /** Sessions leased where routes lead; its onRetry counts what is run again. */
  readonly attempts: Attempts;
  /** Every statement's one path: plan, then run (autocommit, or on an interactive transaction). */
  readonly pipeline: StatementPipeline;
  readonly transactions: TransactionRegistry;
  /** The record of keyed writes (exactly-once), in the cluster's own database. */
  readonly idempotency: IdempotencyStore;
  /** Reads that ask for it are answered from here; writes invalidate it before they are answered. */
  readonly cache: ResultCache;
  /** The instance list (Aurora's discovery), when configured. */
  private readonly instances: InstanceReconciler | undefined;
  private readonly checkTimeoutMs: number;
  private started = false;
  /** The idle policy (clusters.<name>.idleToZero): releases every session when quiet so the database may pause. */
  readonly idleToZero: IdleToZero | undefined;

  constructor(
    readonly name: string,
    urls: ClusterEndpoints,
    readonly embedded: boolean,
    config: GatewayConfig,
    private readonly logger: Logger,
    wiring: ClusterWiring = {},
  ) {
    const clock = wiring.clock ?? systemClock;
    const hub = wiring.events ?? new GatewayEvents(logger);
    const events = clusterEvents(hub, name);
    this.checkTimeoutMs = config.topology.checkTimeoutMs;
    this.engine = engineForUrl(urls.writerUrl, {
      preparedCacheSize: config.statements.preparedCacheSize,
      cancelGraceMs: CANCEL_GRACE_MS,
      credentials: urls.access?.credentials,
      tls: urls.access?.tls,
      logins: urls.access?.logins,
      flavour: urls.access?.flavour,
      writingFunctions: config.routing.writingFunctions,
    });
    const logins: ReadonlyMap<LoginKey, DatabaseCredentials> = urls.access?.logins ?? new Map<LoginKey, DatabaseCredentials>();
    const settings = poolSettings(config, embedded);
    const loginSettings = loginPoolSettings(config, name, settings);
    this.pools = new PoolSet([READ_WRITE_LOGIN, ...logins.keys()], (endpoint, login) => {
      const readWrite = login === READ_WRITE_LOGIN;
      const credentials = readWrite ? undefined : logins.get(login);
      return new Pool(
        readWrite ? endpoint.name : `${endpoint.name} (${login})`,
        {
          // Every new session checks the role it really reached (the embedded database has one role).
          open: (connectTimeoutMs) =>
            embedded ? this.engine.connect({ url: endpoint.url, credentials }, connectTimeoutMs) : openChecked(this.engine, this.topology, endpoint, credentials, connectTimeoutMs),
          describeError: (err) => this.engine.describeConnectError(err),
        },
        readWrite ? settings : loginSettings,
        logger,
        clock,
      );
    });
    const parts = clusterTopology(
      {
        cluster: name,
        writerUrl: urls.writerUrl,
        readerUrls: urls.readerUrls,
        discovery: urls.discovery,
        embedded,
        engine: this.engine,
        monitor: { ...config.topology, maxReplicaLagMs: config.routing.maxReplicaLagMs },
        membership: {
          joined: (endpoint) => {
            this.pools.add(endpoint);
            if (this.started) for (const pool of this.pools.of(endpoint).values()) pool.start();
          },
          left: (endpoint) => {
            for (const pool of this.pools.delete(endpoint)) void pool.close(this.checkTimeoutMs);
          },
        },
      },
      clock,
      events,
      logger,
    );
    this.endpoints = parts.endpoints;
    this.topology = parts.topology;
    this.monitor = parts.monitor;
    this.instances = parts.instances;
    for (const endpoint of this.endpoints) this.pools.add(endpoint);
    const writer = this.writer;
    if (this.monitor) {
      const instances = this.instances;
      // A failover sign: the instance list may have changed too (Aurora).
      if (instances)
        hub.on("failoverSignal", ({ cluster }) => {
          if (cluster === name) void instances.discover();
        });
      recheckSessionsOnRoleChange(name, hub, this.monitor, this.endpoints, (endpoint) => this.pools.of(endpoint).values(), logger);
    }
    this.router = new Router(this.topology, this.engine, { ...config.routing, failoverWaitMs: config.topology.failoverWaitMs }, clock);
    this.attempts = new Attempts(this.router, this.topology, this.pools, config, clock, events);
    const planner = new Planner(config, this.engine.reader, (token) => this.engine.isPosition(token), clock, name);
    const adminSession = embedded
      ? lentAdminSession((deadline, work) => this.attempts.once(writer, "write", UNRESTRICTED, deadline, work), clock)
      : primaryAdminSession(
          {
            primaryUrl: async (deadline) => (await this.router.primary(deadline)).url,
            connect: (url, timeoutMs) => this.engine.connect({ url, purpose: "pool" }, timeoutMs),
            connectTimeoutMs: config.pool.connectTimeoutMs,
          },
          clock,
        );
    this.idempotency = new IdempotencyStore(this.engine, config.idempotency, clock, logger, adminSession);
    this.cache = new ResultCache(
      name,
      wiring.cacheStore ?? new MemoryStore(config.cache.maxBytes, clock),
      clusterCacheSettings(config, name),
      { primaryNow: () => this.topology.primary()?.position ?? null, compare: (a, b) => this.engine.comparePositions(a, b) },
      clock,
      events,
      logger,
    );
    this.transactions = new TransactionRegistry(this.router, this.attempts, planner, config, clock, logger, this.idempotency, this.cache, wiring.mintTransactionId);
    this.pipeline = new StatementPipeline(planner, new Executor(this.attempts, this.idempotency), this.transactions, new StreamRunner(this.attempts, config), this.cache, events, clock);
    const idleToZero = config.clusters[name]?.idleToZero;
    const monitor = this.monitor;
    this.idleToZero =
      idleToZero === undefined || embedded
        ? undefined
        : new IdleToZero(
            name,
            idleToZero,
            {
              pools: () => [...this.pools.all()].map(({ pool }) => pool),
              // Nothing rests while a transaction is open or while the topology is unsettled (no primary known).
              busy: () => this.transactions.size > 0 || (monitor !== undefined && monitor.primary() === undefined),
              rest: () => {
                monitor?.rest();
                this.instances?.pause();
                this.idempotency.stop();
              },
              wake: () => {
                monitor?.wake();
                this.instances?.resume();
                this.idempotency.start();
              },
            },
            clock,
            logger,
          );
  }

  /** Learns the topology once, then warms the pools and starts the housekeepers. */
  async start(): Promise<void> {
    await this.instances?.start();
    await this.monitor?.start();
    for (const { pool } of this.pools.all()) pool.start();
    this.transactions.start();
    // Checked when a primary is known; the embedded database's one session may be pinned by a
    // transaction when its first keyed commit needs the table, so it is made now too.
    if (this.embedded || this.topology.primary() !== undefined) await checkTableAtStart(this.idempotency, this.checkTimeoutMs * 5, this.logger);
    this.idempotency.start();
    this.idleToZero?.start();
    this.started = true;
  }

  /**
   * Looks at the topology again at once — the instance list (Aurora) and every endpoint's role — as
   * an outside hint asks (an RDS failover event). Hints only speed things up: the monitor stays the
   * judge, so a refresh never declares a failover by itself.
   */
  async refresh(): Promise<void> {
    await this.discover();
    await this.topology.checkAll();
  }

  /** Reads the instance list (Aurora) and adds or removes instance endpoints to match it. */
  discover(): Promise<void> {
    return this.instances?.discover() ?? Promise.resolve();
  }

  /** The configured writer endpoint: its pool is the one reported as the cluster's pool. */
  get writer(): Endpoint {
    return this.endpoints[0] as Endpoint;
  }

  /** The endpoint's pool for a login (default: the read-write login). */
  poolOf(endpoint: Endpoint, login: LoginKey = READ_WRITE_LOGIN): Pool {
    return this.pools.get(endpoint, login);
  }

  health(): HealthResponse["clusters"][string] {
    return clusterHealth(this);
  }

  /** Rolls back open transactions, stops the monitor, then closes the pools within the bound. */
  async close(timeoutMs: number): Promise<void> {
    this.instances?.pause();
    this.idleToZero?.stop();
    this.transactions.closeAll();
    this.idempotency.stop();
    this.topology.close();
    await Promise.all([...this.pools.all()].map(({ pool }) => pool.close(timeoutMs)));
    this.logger.debug({ cluster: this.name }, "cluster closed");
  }
}
