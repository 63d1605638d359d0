/**
 * Wires the gateway together explicitly: clusters (or the embedded PostgreSQL when none is
 * configured), their pools, the HTTP server; and takes it apart again in a bounded drain.
 * Nothing happens at import time.
 */
import type { FastifyInstance } from "fastify";
import { Cluster } from "./clusters/cluster.js";
import { DataApiService } from "./data-api/service.js";
import { credentialVariants, DataApiTargets } from "./data-api/targets.js";
import { EmfReporter } from "./observability/emf-reporter.js";
import { selfUrl } from "./peers/self-url.js";
import { TransactionOwnership } from "./peers/transaction-ownership.js";
import { redactUrl } from "./config/load.js";
import type { GatewayConfig } from "./config/schema.js";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "./engines/embedded/embedded-postgres.js";
import type { HttpContext } from "./http/context.js";
import { createHttpServer } from "./http/server.js";
import type { Logger } from "./observability/logger.js";
import { type Clock, monotonicClock } from "./pool/clock.js";

export const VERSION = "0.1.0";

export interface Gateway {
  readonly http: FastifyInstance;
  readonly clusters: ReadonlyMap<string, Cluster>;
  readonly embedded: EmbeddedPostgres | undefined;
  /** Listens on config.server host/port; resolves the address. */
  listen(): Promise<string>;
  /** Stops accepting work, lets in-flight requests finish within the drain bound, rolls back, closes. */
  drain(): Promise<void>;
  readonly draining: boolean;
}

export interface GatewayOptions {
  clock?: Clock;
}

export async function createGateway(config: GatewayConfig, logger: Logger, options: GatewayOptions = {}): Promise<Gateway> {
  const clock = options.clock ?? monotonicClock;
  const ownership = config.peers.key === undefined ? undefined : new TransactionOwnership(Buffer.from(config.peers.key));
  const mint = ownership ? () => ownership.mint() : undefined;
  const clusters = new Map<string, Cluster>();
  let embedded: EmbeddedPostgres | undefined;

  const configured = Object.entries(config.clusters);
  if (configured.length === 0) {
    embedded = await startEmbeddedPostgres(config.embedded.dataDir);
    logger.info(
      { dataDir: embedded.dataDir },
      "no database configured: using the embedded PostgreSQL (PGlite, one connection) with its data in %s. " +
        "To use a real server set POOLGATE_WRITER_URL=postgres://user:password@host:5432/db (or clusters in a POOLGATE_CONFIG file)",
      embedded.dataDir,
    );
    clusters.set(config.defaultCluster, new Cluster(config.defaultCluster, { writerUrl: embedded.url, readerUrls: [] }, true, config, logger, clock, mint));
  } else {
    for (const [name, cluster] of configured) {
      logger.info({ cluster: name, writer: redactUrl(cluster.writerUrl), readers: cluster.readerUrls.map(redactUrl) }, "cluster configured");
      clusters.set(name, new Cluster(name, cluster, false, config, logger, clock, mint));
    }
  }
  // Data API secrets with database credentials of their own reach their cluster through pools of their own.
  const variants = new Map<string, Cluster>();
  for (const [i, variant] of credentialVariants(config).entries()) {
    variants.set(variant.key, new Cluster(`${variant.baseCluster}~secret${i + 1}`, variant.endpoints, false, config, logger, clock, mint));
  }
  const everyCluster = [...clusters.values(), ...variants.values()];
  await Promise.all(everyCluster.map((cluster) => cluster.start()));

  const emf = config.metrics.emf.enabled
    ? new EmfReporter(config.metrics.emf, function* () {
        for (const cluster of everyCluster) {
          for (const endpoint of cluster.endpoints) yield { cluster: cluster.name, endpoint: endpoint.name, stats: endpoint.pool.stats() };
        }
      })
    : undefined;
  emf?.start();

  let draining = false;
  const dataApi = new DataApiService(new DataApiTargets(config, clusters, variants), config);
  const context: HttpContext = { config, clusters, logger, startedAt: Date.now(), isDraining: () => draining, dataApi, ownership };
  const http = createHttpServer(context, VERSION);

  async function drain(): Promise<void> {
    if (draining) return;
    draining = true;
    const deadline = Date.now() + config.server.drainTimeoutMs;
    logger.info({ drainTimeoutMs: config.server.drainTimeoutMs }, "draining: no new work; finishing in-flight requests");
    // Keep-alive sockets that finish their last request later are closed as they become idle.
    const closeIdle = setInterval(() => http.server.closeIdleConnections(), 50);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      http.close(),
      new Promise((resolve) => {
        timer = setTimeout(resolve, config.server.drainTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    clearInterval(closeIdle);
    emf?.stop();
    for (const cluster of everyCluster) await cluster.close(Math.max(0, deadline - Date.now()));
    await embedded?.stop();
    logger.info("drained");
  }

  return {
    http,
    clusters,
    embedded,
    listen: async () => {
      const address = await http.listen({ host: config.server.host, port: config.server.port });
      ownership?.setSelf(config.peers.selfUrl ?? selfUrl(config.server.host, Number(new URL(address).port)));
      return address;
    },
    drain,
    get draining() {
      return draining;
    },
  };
}
