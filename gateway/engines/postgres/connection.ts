/**
 * One PostgreSQL session through `pg`, as the pool sees it. Owns: the per-connection prepared-statement
 * cache (LRU, server-side DEALLOCATE on eviction), statement timeouts that really cancel on the server
 * (CancelRequest, then a hard cut if the server stays silent), result-size bounds enforced while rows
 * stream in, session-state tracking and reset, and death detection.
 */
import pg from "pg";
import type { Column, Param } from "../../../schemas/query.js";
import { GatewayError } from "../../errors.js";
import type { EngineConnection, ExecuteOptions, StatementResult, TransactionOptions } from "../engine.js";
import { type CancelTarget, sendCancelRequest } from "./cancel.js";
import { isDatabaseError, isSessionFatal, mapStatementError } from "./errors.js";
import { mayChangeSessionState } from "./session-state.js";
import { prepareParams, TYPE_PARSERS, type TypeParserSet } from "./values.js";

export interface PostgresConnectionSettings {
  preparedCacheSize: number;
  /** After a cancel, how long to wait for the server before cutting the socket. */
  cancelGraceMs: number;
  /** Shared OID -> type name cache for the endpoint. */
  typeNames: Map<number, string>;
}

interface RowHandler {
  handleDataRow(this: unknown, message: { fields: (string | null)[] }): void;
}
const baseHandleDataRow = (pg.Query.prototype as unknown as RowHandler).handleDataRow;

/** A pg Query that stops keeping rows once the result passes its size bounds. */
class BoundedQuery extends pg.Query {
  bytes = 0;
  rowsSeen = 0;
  overLimit = false;

  constructor(
    config: pg.QueryConfig & { rowMode: "array"; types: TypeParserSet; callback: (err: Error | null, result: unknown) => void },
    private readonly maxBytes: number,
    private readonly maxRows: number,
  ) {
    super(config as pg.QueryConfig);
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    if (this.overLimit) return;
    for (const field of message.fields) if (field !== null) this.bytes += field.length;
    this.rowsSeen++;
    if (this.bytes > this.maxBytes || this.rowsSeen > this.maxRows) {
      this.overLimit = true;
      return;
    }
    baseHandleDataRow.call(this, message);
  }
}

interface PgInternals {
  processID: number;
  secretKey: number | Buffer;
  host: string;
  port: number;
  connection: { parsedStatements: Record<string, string>; stream: { destroy(): void } };
  getTransactionStatus(): string | null;
}

const ISOLATION_SQL = { "read committed": "READ COMMITTED", "repeatable read": "REPEATABLE READ", serializable: "SERIALIZABLE" } as const;

type RawResult = pg.QueryResult<unknown[]>;

export class PostgresConnection implements EngineConnection {
  private readonly prepared = new Map<string, string>();
  private statementCounter = 0;
  private sessionDirty = false;
  /** A CancelRequest went out and may still land on whatever runs next: never hand this session on. */
  private cancelMayLand = false;
  private dead = false;
  private readonly deathListeners: ((cause: Error) => void)[] = [];
  private readonly internals: PgInternals;

  constructor(
    readonly id: number,
    private readonly client: pg.Client,
    private readonly settings: PostgresConnectionSettings,
  ) {
    this.internals = client as unknown as PgInternals;
    client.on("error", (err) => this.markDead(err));
    client.on("end", () => this.markDead(new Error("connection ended")));
  }

  get alive(): boolean {
    return !this.dead;
  }

  get needsReset(): boolean {
    return this.sessionDirty || this.cancelMayLand || this.internals.getTransactionStatus() !== "I";
  }

  onDeath(listener: (cause: Error) => void): void {
    this.deathListeners.push(listener);
  }

  async execute(sql: string, params: readonly Param[], options: ExecuteOptions): Promise<StatementResult> {
    if (mayChangeSessionState(sql)) this.sessionDirty = true;
    const name = params.length > 0 && this.settings.preparedCacheSize > 0 ? this.statementName(sql) : undefined;
    let callback!: (err: Error | null, result: unknown) => void;
    const done = new Promise<unknown>((resolve, reject) => {
      callback = (err, result) => (err ? reject(err) : resolve(result));
    });
    const query = new BoundedQuery(
      {
        text: sql,
        values: prepareParams(params),
        ...(name === undefined ? {} : { name }),
        rowMode: "array",
        types: TYPE_PARSERS[options.bigNumbers],
        callback,
      },
      options.maxResultBytes,
      options.maxResultRows,
    );
    const raw = await this.run(query, done, options.timeoutMs);
    if (query.overLimit) {
      throw new GatewayError(
        "RESULT_TOO_LARGE",
        `result exceeds the limit of ${options.maxResultRows} rows or ${options.maxResultBytes} bytes (saw at least ${query.rowsSeen} rows, ${query.bytes} bytes); add a LIMIT or select fewer columns`,
      );
    }
    // A multi-statement simple query yields one result per statement; the last one is returned.
    const result = (Array.isArray(raw) ? raw[raw.length - 1] : raw) as RawResult;
    return {
      command: result.command ?? "",
      columns: await this.describeColumns(result.fields ?? []),
      rows: result.rows ?? [],
      rowCount: result.rowCount ?? null,
    };
  }

  async begin(options: TransactionOptions, timeoutMs: number): Promise<void> {
    let sql = "BEGIN";
    if (options.isolation) sql += ` ISOLATION LEVEL ${ISOLATION_SQL[options.isolation]}`;
    if (options.readOnly) sql += " READ ONLY";
    await this.simple(sql, timeoutMs);
  }

  async commit(timeoutMs: number): Promise<"committed" | "rolled back"> {
    const result = await this.simple("COMMIT", timeoutMs);
    return result.command === "ROLLBACK" ? "rolled back" : "committed";
  }

  async rollback(timeoutMs: number): Promise<void> {
    await this.simple("ROLLBACK", timeoutMs);
  }

  async ping(timeoutMs: number): Promise<void> {
    await this.simple("SELECT 1", timeoutMs);
  }

  async reset(timeoutMs: number): Promise<void> {
    if (this.cancelMayLand) throw new Error("a cancel request may still land on this session");
    if (this.internals.getTransactionStatus() !== "I") await this.simple("ROLLBACK", timeoutMs);
    if (this.sessionDirty) {
      // DISCARD ALL drops temp tables, GUCs, advisory locks, LISTENs, cursors and prepared statements,
      // ours included, so the statement cache is forgotten with them.
      await this.simple("DISCARD ALL", timeoutMs);
      this.prepared.clear();
      this.internals.connection.parsedStatements = {};
      this.sessionDirty = false;
    }
  }

  async close(): Promise<void> {
    this.dead = true;
    await this.client.end().catch(() => undefined);
  }

  destroy(): void {
    this.dead = true;
    this.internals.connection.stream.destroy();
  }

  private markDead(cause: Error): void {
    if (this.dead) return;
    this.dead = true;
    for (const listener of this.deathListeners) listener(cause);
  }

  private async simple(sql: string, timeoutMs: number): Promise<RawResult> {
    let callback!: (err: Error | null, result: unknown) => void;
    const done = new Promise<unknown>((resolve, reject) => {
      callback = (err, result) => (err ? reject(err) : resolve(result));
    });
    const query = new BoundedQuery({ text: sql, rowMode: "array", types: TYPE_PARSERS.string, callback }, 1 << 20, 1000);
    return (await this.run(query, done, timeoutMs)) as RawResult;
  }

  /** Submits a query and enforces its timeout: cancel on the server first, cut the socket if that fails. */
  private async run(query: BoundedQuery, done: Promise<unknown>, timeoutMs: number): Promise<unknown> {
    if (this.dead) throw new GatewayError("CONNECTION_LOST", "the database session closed before the statement was sent");
    let timedOut = false;
    let hardTimer: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      this.cancelMayLand = true;
      void sendCancelRequest(this.cancelTarget(), this.settings.cancelGraceMs);
      hardTimer = setTimeout(() => this.destroy(), this.settings.cancelGraceMs);
    }, timeoutMs);
    try {
      this.client.query(query);
      return await done;
    } catch (err) {
      throw this.mapRunError(err, timedOut, timeoutMs);
    } finally {
      clearTimeout(timer);
      if (hardTimer) clearTimeout(hardTimer);
    }
  }

  private mapRunError(err: unknown, timedOut: boolean, timeoutMs: number): GatewayError {
    if (isDatabaseError(err) && !isSessionFatal(err)) {
      if (err.code === "57014" && (timedOut || err.message.includes("statement timeout"))) {
        if (timedOut) this.cancelMayLand = false; // our cancel was consumed by this statement
        return new GatewayError("STATEMENT_TIMEOUT", `statement cancelled after ${timeoutMs}ms timeout`, { cause: err });
      }
      return mapStatementError(err);
    }
    this.markDead(err instanceof Error ? err : new Error(String(err)));
    const why = timedOut
      ? `statement timed out after ${timeoutMs}ms and the server did not answer the cancel`
      : `the database session died while the statement ran (${err instanceof Error ? err.message : String(err)})`;
    return new GatewayError("OUTCOME_UNKNOWN", `${why}: it may or may not have been applied`, { cause: err });
  }

  private cancelTarget(): CancelTarget {
    const { host, port, processID, secretKey } = this.internals;
    return { host, port, processId: processID, secretKey };
  }

  private statementName(sql: string): string {
    const cached = this.prepared.get(sql);
    if (cached !== undefined) {
      this.prepared.delete(sql);
      this.prepared.set(sql, cached);
      return cached;
    }
    if (this.prepared.size >= this.settings.preparedCacheSize) {
      const oldest = this.prepared.entries().next().value;
      if (oldest) {
        this.prepared.delete(oldest[0]);
        this.forgetStatement(oldest[1]);
      }
    }
    const name = `poolgate_${++this.statementCounter}`;
    this.prepared.set(sql, name);
    return name;
  }

  private forgetStatement(name: string): void {
    const parsed = this.internals.connection.parsedStatements;
    if (parsed[name] === undefined) return;
    delete parsed[name];
    // Queued ahead of the caller's statement; a failure (aborted transaction) only leaves it unused.
    this.client.query(`DEALLOCATE ${name}`).catch(() => undefined);
  }

  private async describeColumns(fields: pg.FieldDef[]): Promise<Column[]> {
    const names = this.settings.typeNames;
    const unknown = fields.filter((field) => !names.has(field.dataTypeID)).map((field) => field.dataTypeID);
    if (unknown.length > 0 && this.internals.getTransactionStatus() !== "E") {
      try {
        const { rows } = await this.client.query<{ oid: number; typname: string }>(
          "SELECT oid::int4 AS oid, typname FROM pg_catalog.pg_type WHERE oid = ANY($1::oid[])",
          [unknown],
        );
        for (const row of rows) names.set(row.oid, row.typname);
      } catch {
        // Type names are a courtesy: the values are already parsed.
      }
    }
    return fields.map((field) => ({ name: field.name, type: names.get(field.dataTypeID) ?? `oid:${field.dataTypeID}` }));
  }
}
