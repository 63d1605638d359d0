/**
 * A configured cluster at run time: its engine, its endpoint pool, and the executor and transaction
 * registry that use it. Read/write routing (a later issue) adds reader pools here.
 */
import type { HealthResponse } from "../../schemas/health.js";
import type { GatewayConfig } from "../config/schema.js";
import type { Engine } from "../engines/engine.js";
import { PostgresEngine } from "../engines/postgres/engine.js";
import { Executor } from "../execution/executor.js";
import { TransactionRegistry } from "../execution/transactions.js";
import type { Logger } from "../observability/logger.js";
import { type Clock, monotonicClock } from "../pool/clock.js";
import { Pool, type PoolSettings } from "../pool/pool.js";

/** Time allowed for the server to answer a CancelRequest before the socket is cut. */
const CANCEL_GRACE_MS = 2000;

export class Cluster {
  readonly engine: Engine;
  readonly pool: Pool;
  readonly executor: Executor;
  readonly transactions: TransactionRegistry;

  constructor(
    readonly name: string,
    writerUrl: string,
    readonly embedded: boolean,
    config: GatewayConfig,
    logger: Logger,
    clock: Clock = monotonicClock,
  ) {
    this.engine = new PostgresEngine({ preparedCacheSize: config.statements.preparedCacheSize, cancelGraceMs: CANCEL_GRACE_MS });
    const engine = this.engine;
    this.pool = new Pool(
      `${name}/writer`,
      {
        open: (connectTimeoutMs) => engine.connect({ url: writerUrl }, connectTimeoutMs),
        describeError: (err) => engine.describeConnectError(err),
      },
      poolSettings(config, embedded),
      logger,
      clock,
    );
    this.executor = new Executor(this.pool, config);
    this.transactions = new TransactionRegistry(this.pool, config, clock, logger);
  }

  start(): void {
    this.pool.start();
    this.transactions.start();
  }

  health(): HealthResponse["clusters"][string] {
    return {
      engine: this.engine.kind,
      embedded: this.embedded,
      database: this.pool.databaseState(),
      pool: this.pool.stats(),
      openTransactions: this.transactions.size,
    };
  }

  /** Rolls back open transactions, then closes the pool within the bound. */
  async close(timeoutMs: number): Promise<void> {
    this.transactions.closeAll();
    await this.pool.close(timeoutMs);
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
