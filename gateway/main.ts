/** Entry point: load config -> create the gateway -> listen; SIGTERM/SIGINT drain and exit. */
// First: V8's settings apply before any other module is evaluated (v8-flags.ts).
import "./v8-flags.js";
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
  const gateway = await createGateway(config, logger);
  for (const cluster of gateway.clusters.values()) {
    for (const { endpoint, pool } of cluster.pools.all()) {
      const warm = await pool.whenWarm(config.pool.acquireTimeoutMs);
      const context = { pool: pool.name, role: endpoint.role, idle: pool.stats().idle };
      if (warm) logger.info(context, "pool warmed");
      else logger.warn({ ...context, database: pool.databaseState() }, "pool not warm yet; serving anyway and retrying");
    }
  }
  const address = await gateway.listen();
  logger.info({ address }, `poolgate listening on ${address}`);

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
