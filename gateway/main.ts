/** Entry point: load config -> create the gateway -> listen; SIGTERM/SIGINT drain and exit. */
// First: V8's settings apply before any other module is evaluated (v8-flags.ts).
import "./v8-flags.js";
import { performance } from "node:perf_hooks";
import { createGateway } from "./app.js";
import { ConfigError, loadConfig } from "./config/load.js";
import { createLogger } from "./logger.js";

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`poolgate: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.log.level);
  const startedMs = performance.now();
  const gateway = await createGateway(config, logger, { readyAtListen: false });
  // Listen first: /livez answers at once and /readyz says "starting", so a database outage at start
  // is a task that is not ready yet, never one the orchestrator kills for not answering. The pools
  // warm together, each for at most acquireTimeoutMs, and the task is ready then, warm or not: the
  // pools keep retrying, and requests wait or fail fast as during any outage. The CDK stack's
  // health-check grace period is sized from this bound (cdk/constructs/gateway-service.ts).
  const address = await gateway.listen();
  logger.info({ address, startMs: Math.round(performance.now() - startedMs) }, `poolgate listening on ${address}`);
  const pools = [...gateway.clusters.values()].flatMap((cluster) => [...cluster.pools.all()]);
  await Promise.all(
    pools.map(async ({ endpoint, pool }) => {
      const warm = await pool.whenWarm(config.pool.acquireTimeoutMs);
      const context = { pool: pool.name, role: endpoint.role, idle: pool.stats().idle };
      if (warm) logger.info(context, "pool warmed");
      else logger.warn({ ...context, database: pool.databaseState() }, "pool not warm yet; serving anyway and retrying");
    }),
  );
  gateway.markReady();
  logger.info({ readyMs: Math.round(performance.now() - startedMs) }, "poolgate ready");

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    gateway.drain().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, "drain failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

main().catch((err: unknown) => {
  // Settings that only prove impossible while starting (a CA file that cannot be read, a secret ARN
  // without a region) are configuration errors too: said in one line, exit code 2.
  if (err instanceof ConfigError) {
    process.stderr.write(`poolgate: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`poolgate: failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
