/**
 * Runs a streamed read (POST /v1/query/stream): one statement whose rows are handed on batch by batch
 * as the caller takes them. Until the stream has opened (its columns and first rows are in) a failure
 * is retried like any autocommit statement's, within the request's deadline; once a row may have
 * been handed on, never. A read-only principal's stream runs in a READ ONLY transaction that ends in
 * ROLLBACK when the stream ends, fails or is closed.
 */
import type { GatewayConfig } from "../config/schema.js";
import type { EngineConnection, EngineStatement, RowCursor, StreamOptions, TransactionOptions } from "../engines/engine.js";
import { GatewayError } from "../errors.js";
import { endingCursor } from "./ending-cursor.js";
import { readOnlyFailure } from "./failure.js";
import type { Attempts } from "./attempt.js";
import type { Plan } from "./plan.js";

export interface OpenedStream {
  cursor: RowCursor;
  /** How many times the gateway tried to open it (retries + 1). */
  attempts: number;
}

/** A stream is one statement: a string the engine's reader finds several statements in is refused before anything runs. */
export function checkStreamable(plan: Plan): void {
  const [statement] = plan.statements;
  if (plan.statements.length !== 1 || statement === undefined || statement.analysis.statementCount !== 1) {
    throw new GatewayError("INVALID_REQUEST", "a stream runs exactly one statement; send several through /v1/batch", {
      issues: [{ path: "sql", message: "one statement only" }],
    });
  }
}

/** The engine's stream options for a plan: the statement's timeout, and the streams config. */
export function streamOptions(plan: Plan, config: GatewayConfig): StreamOptions {
  return {
    timeoutMs: plan.options.timeoutMs,
    bigNumbers: plan.options.bigNumbers,
    fetchRows: config.streams.fetchRows,
    maxRowBytes: config.limits.maxResultBytes,
  };
}

/** A read-only principal's stream inside BEGIN READ ONLY … ROLLBACK, with refusals read as permission errors. */
async function readOnlyStream(
  connection: EngineConnection,
  statement: EngineStatement,
  options: StreamOptions,
  isolation: TransactionOptions["isolation"],
): Promise<RowCursor> {
  const rollback = async (): Promise<void> => {
    if (connection.alive) await connection.rollback(options.timeoutMs).catch(() => undefined);
  };
  let cursor: RowCursor;
  try {
    await connection.begin({ isolation, readOnly: true, lockReadOnly: true }, options.timeoutMs);
    cursor = await connection.stream(statement, options);
  } catch (err) {
    await rollback();
    throw readOnlyFailure(err);
  }
  const end = async (): Promise<void> => {
    await cursor.close();
    await rollback();
  };
  return endingCursor(cursor, end, readOnlyFailure);
}

export class StreamRunner {
  constructor(
    private readonly attempts: Attempts,
    private readonly config: GatewayConfig,
  ) {}

  /** Opens the plan's stream where its route leads; retried (as a whole) only until it has opened. */
  async open(plan: Plan): Promise<OpenedStream> {
    checkStreamable(plan);
    const statement = plan.statements[0] as Plan["statements"][number];
    const options = streamOptions(plan, this.config);
    const { value, attempts } = await this.attempts.stream(plan, (connection) =>
      plan.runAs.readOnly ? readOnlyStream(connection, statement, options, plan.isolation) : connection.stream(statement, options),
    );
    return { cursor: value, attempts };
  }
}
