/**
 * Wires the gateway together explicitly: clusters (or the embedded PostgreSQL when none is
 * configured), their pools, the HTTP server; and takes it apart again in a bounded drain.
 * Nothing happens at import time.
 */
import type { FastifyInstance } from "fastify";
import { AccessPolicy } from "./auth/access-policy.js";
import { Authenticator } from "./auth/authenticator.js";
import { SecretsReader } from "./aws/secrets-manager.js";
import { Cluster } from "./clusters/cluster.js";
import { openCacheStore } from "./cache/open-store.js";
import { type DatabaseAccess, databaseAccessFor } from "./credentials/database-access.js";
import { READ_WRITE_LOGIN } from "./credentials/logins.js";
import { DataApiService } from "./data-api/service.js";
import { DataApiTargets, dataApiSecretLogins } from "./data-api/targets.js";
import { EmfReporter } from "./observability/emf-reporter.js";
import { GatewayEvents } from "./events.js";
import { registerInsightMetrics } from "./observability/insight-metrics.js";
import { GatewayMetrics } from "./observability/metrics.js";
import { QueryInsights } from "./observability/query-insights.js";
import { StatusHistory } from "./observability/status-history.js";
import { GatewayTracing } from "./observability/tracing.js";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import { selfUrl } from "./peers/self-url.js";
import { TransactionOwnership } from "./peers/transaction-ownership.js";
import { redactUrl } from "./config/load.js";
import type { GatewayConfig } from "./config/schema.js";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "./engines/embedded/embedded-postgres.js";
import type { HttpContext } from "./http/context.js";
import { createHttpServer } from "./http/server.js";
import type { Logger } from "./logger.js";
import { type Clock, systemClock, type Timer } from "./clock.js";

export const VERSION = "0.1.0";

export interface Gateway {
  readonly http: FastifyInstance;
  readonly clusters: ReadonlyMap<string, Cluster>;
  readonly embedded: EmbeddedPostgres | undefined;
  /** Caller authentication (tests refresh its bearer tokens on demand). */
  readonly authenticator: Authenticator;
  /** Listens on config.server host/port; resolves the address. */
  listen(): Promise<string>;
  /** Stops accepting work, lets in-flight requests finish within the drain bound, rolls back, closes. */
  drain(): Promise<void>;
  readonly draining: boolean;
  /** Start-up is over: /readyz answers 200 (until draining). */
  markReady(): void;
}

export interface GatewayOptions {
  clock?: Clock;
  /**
   * Whether /readyz answers 200 as soon as the gateway listens (default true). main.ts passes false:
   * it listens first, warms the pools, then calls markReady.
   */
  readyAtListen?: boolean;
  /** With tracing on: export each span here as it ends instead of over OTLP/HTTP (tests). */
  spanExporter?: SpanExporter;
}

export async function createGateway(config: GatewayConfig, logger: Logger, options: GatewayOptions = {}): Promise<Gateway> {
  const clock = options.clock ?? systemClock;
  /** One Secrets Manager reader for the whole gateway: bearer tokens and database credentials. */
  const secrets = new SecretsReader(config.aws.secretsManagerEndpoint);
  const policy = new AccessPolicy(config);
  const authenticator = new Authenticator(config, secrets, logger);
  await authenticator.start();
  const ownership = config.peers.key === undefined ? undefined : new TransactionOwnership(Buffer.from(config.peers.key));
  const mint = ownership ? () => ownership.mint() : undefined;
  /** What the parts tell each other and the metrics; given to every cluster at construction. */
  const events = new GatewayEvents(logger);
  const cacheStore = openCacheStore(config, Object.keys(config.clusters).length === 0 ? [config.defaultCluster] : Object.keys(config.clusters), clock, logger);
  const wiring = { clock, events, mintTransactionId: mint, cacheStore };
  const clusters = new Map<string, Cluster>();
  let embedded: EmbeddedPostgres | undefined;
  /** A start that fails part-way closes what it had started (the embedded database lets its directory go). */
  const closeStarted = async () => {
    await cacheStore.close();
    authenticator.close();
    secrets.close();
    await embedded?.stop();
  };

  const configured = Object.entries(config.clusters);
  if (configured.length === 0) {
    try {
      embedded = await startEmbeddedPostgres(config.embedded.dataDir);
    } catch (err) {
      // Its data directory in use by another gateway, or PGlite failed to start.
      await closeStarted();
      throw err;
    }
    logger.info(
      { dataDir: embedded.dataDir },
      "no database configured: using the embedded PostgreSQL (PGlite, one connection) with its data in %s. " +
        "To use a real server set POOLGATE_WRITER_URL=postgres://user:password@host:5432/db (or clusters in a POOLGATE_CONFIG file)",
      embedded.dataDir,
    );
    clusters.set(config.defaultCluster, new Cluster(config.defaultCluster, { writerUrl: embedded.url, readerUrls: [] }, true, config, logger, wiring));
  }
  let access: Map<string, DatabaseAccess>;
  try {
    access = withDataApiSecretLogins(config, await prepareDatabaseAccess(config, { secrets, logger }));
  } catch (err) {
    await closeStarted();
    throw err;
  }
  for (const [name, cluster] of configured) {
    logger.info(
      {
        cluster: name,
        writer: redactUrl(cluster.writerUrl),
        readers: cluster.readerUrls.map(redactUrl),
        credentials: cluster.credentials?.source ?? "url",
        logins: [...(access.get(name)?.logins?.keys() ?? [])],
        tls: cluster.tls?.mode ?? "url",
      },
      "cluster configured",
    );
    clusters.set(name, new Cluster(name, { ...cluster, access: access.get(name) }, false, config, logger, wiring));
  }
  const everyCluster = [...clusters.values()];
  // Listening before the clusters start: a failover during start-up is counted too.
  const metrics = new GatewayMetrics(() => everyCluster, events);
  const insights = new QueryInsights(config.insights, (name) => clusters.get(name)?.engine.reader, clock, events);
  registerInsightMetrics(metrics.registry, insights, config.insights);
  try {
    await Promise.all(everyCluster.map((cluster) => cluster.start()));
  } catch (err) {
    // A cluster that cannot serve as configured (its idempotency table out of reach) stops the start.
    await Promise.all(everyCluster.map((cluster) => cluster.close(0).catch(() => undefined)));
    await closeStarted();
    throw err;
  }
  // Off: nothing is built, no context manager registered, no hook added (docs/tracing.md).
  const tracing = config.tracing.enabled ? new GatewayTracing(config.tracing, VERSION, events, { exporter: options.spanExporter }) : undefined;
  const history = new StatusHistory(metrics.totals, () => clusters.values());
  history.start();
  const emf = config.metrics.emf.enabled
    ? new EmfReporter(
        config.metrics.emf,
        function* () {
          for (const cluster of everyCluster) {
            for (const { endpoint, login, pool } of cluster.pools.all()) {
              yield { cluster: cluster.name, endpoint: login === READ_WRITE_LOGIN ? endpoint.name : `${endpoint.name} (${login})`, stats: pool.stats() };
            }
          }
        },
        undefined,
        undefined,
        () => metrics.totals,
      )
    : undefined;
  emf?.start();

  let draining = false;
  let ready = options.readyAtListen ?? true;
  const dataApi = new DataApiService(new DataApiTargets(config, clusters), config, policy);
  const context: HttpContext = {
    config,
    clusters,
    logger,
    startedAt: clock.wallNow(),
    isDraining: () => draining,
    isReady: () => ready,
    dataApi,
    ownership,
    policy,
    metrics,
    history,
    insights,
    tracing,
    version: VERSION,
  };
  const http = createHttpServer(context, authenticator, VERSION);

  async function drain(): Promise<void> {
    if (draining) return;
    draining = true;
    const deadline = clock.now() + config.server.drainTimeoutMs;
    logger.info({ drainTimeoutMs: config.server.drainTimeoutMs }, "draining: no new work; finishing in-flight requests");
    // Keep-alive sockets that finish their last request later are closed as they become idle.
    const closeIdle = clock.every(50, () => http.server.closeIdleConnections());
    let timer: Timer | undefined;
    await Promise.race([
      http.close(),
      new Promise((resolve) => {
        timer = clock.after(config.server.drainTimeoutMs, () => resolve(undefined));
      }),
    ]);
    timer?.cancel();
    closeIdle.cancel();
    emf?.stop();
    history.stop();
    for (const cluster of everyCluster) await cluster.close(Math.max(0, deadline - clock.now()));
    await embedded?.stop();
    await cacheStore.close();
    authenticator.close();
    secrets.close();
    await tracing?.shutdown().catch((err: unknown) => logger.warn({ err }, "tracing: the last spans were not exported"));
    logger.info("drained");
  }

  return {
    http,
    clusters,
    embedded,
    authenticator,
    listen: async () => {
      const address = await http.listen({ host: config.server.host, port: config.server.port, backlog: config.server.listenBacklog });
      ownership?.setSelf(config.peers.selfUrl ?? selfUrl(config.server.host, Number(new URL(address).port)));
      return address;
    },
    drain,
    get draining() {
      return draining;
    },
    markReady() {
      ready = true;
    },
  };
}

/**
 * Data API secrets that stand for a user of their own are logins of their cluster: pools of their own
 * on every endpoint, over the cluster's TLS.
 */
function withDataApiSecretLogins(config: GatewayConfig, access: Map<string, DatabaseAccess>): Map<string, DatabaseAccess> {
  for (const [name, secretLogins] of dataApiSecretLogins(config)) {
    const current = access.get(name) ?? {};
    access.set(name, { ...current, logins: new Map([...(current.logins ?? []), ...secretLogins]) });
  }
  return access;
}

/**
 * Builds every cluster's credentials source and TLS and reads each source once (the secret, a first
 * IAM token), so that a wrong ARN, a missing permission or an unreadable CA bundle stops the start.
 */
async function prepareDatabaseAccess(
  config: GatewayConfig,
  dependencies: Parameters<typeof databaseAccessFor>[2],
): Promise<Map<string, DatabaseAccess>> {
  const access = new Map<string, DatabaseAccess>();
  for (const [name, cluster] of Object.entries(config.clusters)) access.set(name, databaseAccessFor(name, cluster, dependencies));
  const sources = [...access.values()].flatMap((each) => [each.credentials, ...(each.logins?.values() ?? [])]);
  await Promise.all(sources.map((source) => source?.prepare() ?? Promise.resolve()));
  return access;
}
