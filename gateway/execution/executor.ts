/**
 * Runs statements outside interactive transactions: one autocommit statement, or an atomic batch
 * (BEGIN; statements; COMMIT on one connection). Both are retried as a whole when the database
 * rolled them back for a conflict or the connection was lost before anything was committed.
 */
import type { BatchRequest, QueryRequest } from "../../schemas/query.js";
import type { GatewayConfig } from "../config/schema.js";
import type { StatementResult } from "../engines/engine.js";
import { GatewayError } from "../errors.js";
import type { Pool } from "../pool/pool.js";
import { type Attempted, runWithRetry } from "./retry.js";
import { executeOptions } from "./run-options.js";

export class Executor {
  constructor(
    private readonly pool: Pool,
    private readonly config: GatewayConfig,
  ) {}

  query(request: QueryRequest): Promise<Attempted<StatementResult>> {
    const options = executeOptions(this.config, request);
    const params = request.params ?? [];
    return runWithRetry(this.config.retry, async () => {
      const entry = await this.pool.acquire();
      try {
        return await entry.connection.execute(request.sql, params, options);
      } finally {
        this.pool.release(entry);
      }
    });
  }

  batch(request: BatchRequest): Promise<Attempted<StatementResult[]>> {
    const options = executeOptions(this.config, request);
    return runWithRetry(this.config.retry, async () => {
      const entry = await this.pool.acquire();
      const connection = entry.connection;
      let committing = false;
      try {
        await connection.begin({ isolation: request.isolation, readOnly: request.readOnly }, options.timeoutMs);
        const results: StatementResult[] = [];
        for (const statement of request.statements) {
          results.push(await connection.execute(statement.sql, statement.params ?? [], options));
        }
        committing = true;
        if ((await connection.commit(options.timeoutMs)) === "rolled back") {
          throw new GatewayError("TRANSACTION_ABORTED", "the database rolled the batch back at COMMIT");
        }
        return results;
      } catch (err) {
        // Before COMMIT was sent, a lost session means the transaction rolled back: safe to run again.
        if (!committing && err instanceof GatewayError && err.code === "OUTCOME_UNKNOWN") {
          throw new GatewayError("CONNECTION_LOST", `the batch's connection was lost before COMMIT; nothing was applied (${err.message})`, {
            cause: err,
          });
        }
        throw err;
      } finally {
        // A failed batch leaves the session in an aborted transaction; release rolls it back.
        this.pool.release(entry);
      }
    });
  }
}
