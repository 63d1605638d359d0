/**
 * A configured cluster at run time: its engine, one endpoint per configured writer/reader URL (and
 * per discovered instance), a pool per endpoint and database login, the topology that says which is
 * the primary, the router, and the executor and transaction registry on top. Every new pooled
 * connection checks the role it really reached.
 */
import type { HealthResponse } from "../../schemas/health.js";
import type { GatewayConfig } from "../config/schema.js";
import type { DatabaseAccess } from "../credentials/database-access.js";
import type { DatabaseCredentials } from "../credentials/database-credentials.js";
import { type LoginKey, READ_WRITE_LOGIN } from "../credentials/logins.js";
import type { Engine, EngineConnection } from "../engines/engine.js";
import { engineForUrl } from "../engines/engine-for-url.js";
import { clusterEvents, GatewayEvents } from "../events.js";
import { Executor } from "../execution/executor.js";
import { Attempts } from "../execution/attempt.js";
import { StatementPipeline } from "../execution/pipeline.js";
import { StreamRunner } from "../execution/streams.js";
import { Planner } from "../execution/plan.js";
import { TransactionRegistry } from "../execution/transactions.js";
import { GatewayError } from "../errors.js";
import { IdempotencyStore } from "../idempotency/store.js";
import { UNRESTRICTED } from "../execution/run-as.js";
import type { Logger } from "../logger.js";
import { type Clock, systemClock, type Timer } from "../clock.js";
import { Pool, type PoolSettings } from "../pool/pool.js";
import { Router } from "../routing/router.js";
import { type DiscoveredInstance, type DiscoverySettings, InstanceDiscovery } from "../topology/discovery.js";
import { Endpoint } from "../topology/endpoint.js";
import { TopologyMonitor } from "../topology/monitor.js";
import { FixedTopology, type Topology } from "../topology/topology.js";
import { PoolSet } from "../pool/pool-set.js";
import { MemoryStore } from "../cache/memory-store.js";
import { ResultCache } from "../cache/result-cache.js";
import { clusterCacheSettings } from "../cache/settings.js";
import { IdleToZero } from "./idle-to-zero.js";
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
  readonly endpoints: Endpoint[];
  /** A pool per endpoint and login. */
  readonly pools: PoolSet<Endpoint>;
  readonly topology: Topology;
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
  private readonly discovery: InstanceDiscovery | undefined;
  private readonly discovered = new Set<Endpoint>();
  private discoveryTimer: Timer | undefined;
  private readonly clock: Clock;
  private readonly discoveryIntervalMs: number;
  private readonly checkTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private discovering: Promise<void> | undefined;
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
    this.clock = clock;
    const hub = wiring.events ?? new GatewayEvents(logger);
    const events = clusterEvents(hub, name);
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
    const loginSettings: PoolSettings = {
      ...settings,
      maxSize: config.clusters[name]?.logins?.maxSize ?? settings.maxSize,
      minIdle: Math.min(config.clusters[name]?.logins?.minIdle ?? settings.minIdle, config.clusters[name]?.logins?.maxSize ?? settings.maxSize),
    };
    this.pools = new PoolSet([READ_WRITE_LOGIN, ...logins.keys()], (endpoint, login) => {
      const readWrite = login === READ_WRITE_LOGIN;
      const pool = new Pool(
        readWrite ? endpoint.name : `${endpoint.name} (${login})`,
        {
          open: (connectTimeoutMs) => this.openChecked(endpoint, readWrite ? undefined : logins.get(login), connectTimeoutMs),
          describeError: (err) => this.engine.describeConnectError(err),
        },
        readWrite ? settings : loginSettings,
        logger,
        clock,
      );
      return pool;
    });
    this.endpoints = [
      this.addEndpoint(`${name}/writer`, urls.writerUrl, true),
      ...urls.readerUrls.map((url, i) => this.addEndpoint(`${name}/reader${i + 1}`, url, false)),
    ];
    this.discovery = urls.discovery && !embedded ? new InstanceDiscovery(this.engine, urls.writerUrl, urls.discovery, logger) : undefined;
    this.discoveryIntervalMs = urls.discovery?.refreshIntervalMs ?? 0;
    this.checkTimeoutMs = config.topology.checkTimeoutMs;
    this.connectTimeoutMs = config.pool.connectTimeoutMs;
    const [writer] = this.endpoints as [Endpoint];
    this.topology = embedded
      ? new FixedTopology(writer)
      : new TopologyMonitor(
          this.endpoints,
          this.engine,
          { ...config.topology, maxReplicaLagMs: config.routing.maxReplicaLagMs },
          logger,
          clock,
          events,
        );
    if (this.topology instanceof TopologyMonitor) {
      const ours = <T extends { cluster: string }>(listener: (payload: T) => void) => (payload: T) => {
        if (payload.cluster === name) listener(payload);
      };
      // A failover sign: the instance list may have changed too (Aurora).
      hub.on("failoverSignal", ours(() => void this.discover()));
      // Pooled sessions that reached an instance of another role than the endpoint now has (opened
      // through a stale name during a failover, or before a role change) are asked again before they
      // are used: a promoted standby's sessions survive its promotion and are good primary sessions,
      // while a session that still reaches the wrong role is replaced. An endpoint whose check failed
      // (role unknown) keeps its sessions: the dead ones die on their own.
      hub.on("roleChange", ours(({ endpoint, previous }) => {
        const role = endpoint.role;
        if (role === "unknown") return;
        const marked = this.verifySessions(endpoint, (connection) => this.sessionRole(connection) !== role, `endpoint is now ${role}, the session is not`);
        if (marked > 0) logger.info({ endpoint: endpoint.name, from: previous, to: role, sessions: marked }, "endpoint role changed; its sessions are re-checked before use");
      }));
      // An instance changed role (by its server id, Aurora): sessions that reach it through any name
      // (a reader name's sessions on the promoted reader, a cluster name's on the old writer) are
      // asked again before use, wherever the endpoint they were opened for now leads.
      hub.on("instanceRoleChange", ours(({ serverId, role, previous }) => {
        let marked = 0;
        for (const endpoint of this.endpoints) {
          if (endpoint.role === "unknown" || endpoint.role === role) continue;
          marked += this.verifySessions(endpoint, (connection) => connection.reachedServerId === serverId, `instance ${serverId} is now ${role}, the endpoint is ${endpoint.role}`);
        }
        logger.info({ serverId, from: previous, to: role, sessions: marked }, "instance changed role; sessions reaching it through other names are re-checked before use");
      }));
    }
    this.router = new Router(this.topology, this.engine, { ...config.routing, failoverWaitMs: config.topology.failoverWaitMs }, clock);
    this.attempts = new Attempts(this.router, this.topology, this.pools, config, clock, events);
    const planner = new Planner(config, this.engine.reader, (token) => this.engine.isPosition(token), clock, name);
    this.idempotency = new IdempotencyStore(this.engine.idempotency, config.idempotency, clock, logger, (timeoutMs, work) => this.adminSession(timeoutMs, work));
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
    const monitor = this.topology instanceof TopologyMonitor ? this.topology : undefined;
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
                this.discoveryTimer?.cancel();
                this.idempotency.stop();
              },
              wake: () => {
                monitor?.wake();
                if (this.discovery) {
                  this.discoveryTimer?.cancel();
                  this.discoveryTimer = this.clock.every(this.discoveryIntervalMs, () => void this.discover());
                }
                this.idempotency.start();
              },
            },
            clock,
            logger,
          );
  }

  /** Learns the topology once, then warms the pools and starts the housekeepers. */
  async start(): Promise<void> {
    if (this.discovery) {
      await this.discover();
      this.discoveryTimer = this.clock.every(this.discoveryIntervalMs, () => void this.discover());
    }
    if (this.topology instanceof TopologyMonitor) await this.topology.start();
    for (const { pool } of this.pools.all()) pool.start();
    this.transactions.start();
    await this.checkIdempotencyTable();
    this.idempotency.start();
    this.idleToZero?.start();
    this.started = true;
  }

  /**
   * Checks the idempotency table while starting, when a primary is known: a table that is missing and
   * cannot be created, or that the read-write login cannot use, refuses the start with the grant it
   * needs (IDEMPOTENCY_UNAVAILABLE) rather than failing every keyed write later. A database that
   * cannot be asked now is asked again by the first keyed write. (The embedded database's one session
   * may be pinned by a transaction when its first keyed commit needs the table: made now too.)
   */
  private async checkIdempotencyTable(): Promise<void> {
    if (!this.embedded && this.topology.primary() === undefined) return;
    try {
      await this.idempotency.check(this.checkTimeoutMs * 5);
    } catch (err) {
      if (err instanceof GatewayError && err.code === "IDEMPOTENCY_UNAVAILABLE") throw err;
      this.logger.warn({ err: String(err) }, "idempotency table not checked at start; the first keyed write checks it");
    }
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
    if (!this.discovery) return Promise.resolve();
    const discovery = this.discovery;
    this.discovering ??= (async () => {
      const primary = this.topology.primary();
      const urls = [...new Set([...(primary ? [primary.url] : []), ...this.endpoints.map((endpoint) => endpoint.url)])];
      const instances = await discovery.discover(urls, this.checkTimeoutMs);
      if (instances) this.reconcile(instances);
    })().finally(() => {
      this.discovering = undefined;
    });
    return this.discovering;
  }

  private reconcile(instances: DiscoveredInstance[]): void {
    this.keepListedLag(instances);
    const known = new Set(this.endpoints.map((endpoint) => endpoint.url));
    for (const instance of instances) {
      if (known.has(instance.url)) continue;
      const endpoint = this.addEndpoint(`${this.name}/${instance.serverId}`, instance.url, false);
      endpoint.listedLagMs = instance.lagMs;
      this.endpoints.push(endpoint);
      this.discovered.add(endpoint);
      if (this.started) for (const pool of this.pools.of(endpoint).values()) pool.start();
      this.logger.info({ endpoint: endpoint.name, writer: instance.writer }, "instance discovered");
    }
    const listed = new Set(instances.map((instance) => instance.url));
    for (const endpoint of [...this.discovered]) {
      // The current primary stays until the monitor stops calling it that.
      if (listed.has(endpoint.url) || endpoint === this.topology.primary()) continue;
      this.discovered.delete(endpoint);
      this.endpoints.splice(this.endpoints.indexOf(endpoint), 1);
      if (this.topology instanceof TopologyMonitor) this.topology.forget(endpoint);
      for (const pool of this.pools.delete(endpoint)) void pool.close(this.checkTimeoutMs);
      this.logger.info({ endpoint: endpoint.name }, "instance left the cluster");
    }
  }

  /**
   * Each endpoint's lag as the instance list gives it (Aurora's replica_lag_in_msec), by the URL
   * discovery made for the instance or by the server id its last check reached; null when not listed.
   */
  private keepListedLag(instances: readonly DiscoveredInstance[]): void {
    for (const endpoint of this.endpoints) {
      const listed = instances.find((instance) => instance.url === endpoint.url) ?? instances.find((instance) => endpoint.serverId !== null && instance.serverId === endpoint.serverId);
      endpoint.listedLagMs = listed?.lagMs ?? null;
    }
  }

  /** An endpoint with its pools, one per login. */
  private addEndpoint(name: string, url: string, writer: boolean): Endpoint {
    const endpoint = new Endpoint(name, url, writer);
    this.pools.add(endpoint);
    return endpoint;
  }

  /**
   * The role of the instance a pooled session reached, as the monitor last saw that instance (by its
   * server id, Aurora), else as the session found it when it was opened.
   */
  private sessionRole(connection: EngineConnection): "primary" | "replica" | undefined {
    const seen = connection.reachedServerId !== undefined && this.topology instanceof TopologyMonitor ? this.topology.roleOfInstance(connection.reachedServerId) : undefined;
    return seen ?? connection.reachedRole;
  }

  /** Marks the endpoint's sessions that `matches` for a role check before their next use; how many. */
  private verifySessions(endpoint: Endpoint, matches: (connection: EngineConnection) => boolean, reason: string): number {
    const verify = async (connection: EngineConnection, timeoutMs: number) => {
      const state = await connection.inspect(timeoutMs);
      connection.reachedRole = state.role;
      connection.reachedServerId = state.serverId;
      return endpoint.role === "unknown" || connection.reachedRole === endpoint.role;
    };
    let marked = 0;
    for (const pool of this.pools.of(endpoint).values()) marked += pool.verifyWhere(matches, verify, reason);
    return marked;
  }

  /** The configured writer endpoint: its pool is the one reported as the cluster's pool. */
  get writer(): Endpoint {
    return this.endpoints[0] as Endpoint;
  }

  /** The endpoint's pool for a login (default: the read-write login). */
  poolOf(endpoint: Endpoint, login: LoginKey = READ_WRITE_LOGIN): Pool {
    return this.pools.get(endpoint, login);
  }

  /**
   * Runs administrative work (the idempotency record's table creation and cleanup) on a session of the
   * primary on the read-write login, outside every pool, so that it neither waits behind nor takes a
   * caller's session; the embedded database has a single session, which it lends from its pool.
   */
  private async adminSession<T>(timeoutMs: number, work: (connection: EngineConnection) => Promise<T>): Promise<T> {
    const deadline = this.clock.now() + timeoutMs;
    if (this.embedded) return this.attempts.once(this.writer, "write", UNRESTRICTED, deadline, work);
    const primary = await this.router.primary(deadline);
    const connection = await this.engine.connect({ url: primary.url, purpose: "pool" }, Math.min(timeoutMs, this.connectTimeoutMs));
    try {
      return await work(connection);
    } finally {
      await connection.close().catch(() => connection.destroy());
    }
  }

  /**
   * Opens a pooled connection and checks what it really reached: a connection to a replica where the
   * topology believes the primary is (a stale DNS name after failover) is closed, and the topology
   * looks again, instead of serving read-only errors.
   */
  private async openChecked(endpoint: Endpoint, credentials: DatabaseCredentials | undefined, connectTimeoutMs: number): Promise<EngineConnection> {
    const connection = await this.engine.connect({ url: endpoint.url, credentials }, connectTimeoutMs);
    if (this.embedded) return connection;
    try {
      const state = await connection.inspect(connectTimeoutMs);
      connection.reachedRole = state.role;
      connection.reachedServerId = state.serverId;
      // A name that still leads to the writer (a reader name, round-robin, before its DNS moved) is
      // not the reader the endpoint stands for: the instance is the primary's, by its own server id.
      const primary = this.topology.primary();
      if (endpoint.role === "replica" && state.role === "primary" && primary !== undefined && primary !== endpoint && state.serverId !== undefined && primary.serverId === state.serverId) {
        throw new Error(`${endpoint.name} reached the primary's instance ${state.serverId} where a reader was expected (a name not moved yet)`);
      }
      if (endpoint.role === "primary" && state.role === "replica") {
        this.topology.signalFailover(`${endpoint.name} now reaches a replica, not a primary`, endpoint);
        throw new Error(`${endpoint.name} reached a replica where a primary was expected`);
      }
      // A replica endpoint that reaches a primary was promoted (or its name moved): reads may run
      // there, and the monitor looks now so that the promotion is known.
      if (endpoint.role === "replica" && state.role === "primary") void this.topology.checkAll();
    } catch (err) {
      connection.destroy();
      throw err;
    }
    return connection;
  }

  /** The writer pool's account of the database; an idle cluster's database may be paused, which is no outage. */
  private databaseState(): HealthResponse["clusters"][string]["database"] {
    const state = this.poolOf(this.writer).databaseState();
    const idle = this.idleToZero?.status().state;
    if (idle === "idle" || idle === "resuming") state.status = idle;
    return state;
  }

  health(): HealthResponse["clusters"][string] {
    const primary = this.topology.primary();
    return {
      engine: this.engine.kind,
      embedded: this.embedded,
      database: this.databaseState(),
      pool: this.poolOf(primary ?? this.writer).stats(),
      openTransactions: this.transactions.size,
      primary: primary?.name ?? null,
      endpoints: this.endpoints.map((endpoint) => ({
        name: endpoint.name,
        role: endpoint.role,
        healthy: endpoint.healthy,
        lagMs: endpoint.lagMs,
        banned: endpoint.banReason,
        position: endpoint.position,
        serverId: endpoint.serverId,
        listedLagMs: endpoint.listedLagMs,
        positionsRefused: endpoint.positionsRefused,
        outstanding: endpoint.outstanding,
        lastError: endpoint.lastError ?? null,
        pool: this.poolOf(endpoint).stats(),
        ...(this.pools.logins.length > 1 ? { logins: Object.fromEntries([...this.pools.of(endpoint)].map(([login, pool]) => [login, pool.stats()])) } : {}),
      })),
      failovers: this.topology instanceof TopologyMonitor ? this.topology.failovers : [],
      idle: this.idleToZero?.status() ?? null,
    };
  }

  /** Rolls back open transactions, stops the monitor, then closes the pools within the bound. */
  async close(timeoutMs: number): Promise<void> {
    this.discoveryTimer?.cancel();
    this.idleToZero?.stop();
    this.transactions.closeAll();
    this.idempotency.stop();
    this.topology.close();
    await Promise.all([...this.pools.all()].map(({ pool }) => pool.close(timeoutMs)));
    this.logger.debug({ cluster: this.name }, "cluster closed");
  }
}

/** The embedded PostgreSQL is a single session, so its pool has exactly one connection. */
function poolSettings(config: GatewayConfig, embedded: boolean): PoolSettings {
  const pool = config.pool;
  const maxSize = embedded ? 1 : pool.maxSize;
  return {
    ...pool,
    maxSize,
    minIdle: embedded ? 1 : (pool.minIdle ?? pool.maxSize),
  };
}
