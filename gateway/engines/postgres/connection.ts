/**
 * One PostgreSQL session through `pg`, as the pool sees it. Owns: the per-connection prepared-statement
 * cache (LRU, server-side DEALLOCATE on eviction), session-state tracking and reset (DISCARD ALL), and
 * PostgreSQL's part of the shared session lifecycle (session-lifecycle.ts): a timed-out statement is
 * stopped with a CancelRequest to the instance the socket reached, and errors are read by SQLSTATE and
 * severity. Result bounds are enforced by StatementQuery while rows stream in.
 */
import type pg from "pg";
import type { Column, Param } from "../../../schemas/query.js";
import { GatewayError } from "../../errors.js";
import { isDatabaseRefusal } from "../../failure-meaning.js";
import { promiseFrom } from "../../promise-from.js";
import type { EngineConnection, ExecuteOptions, InstanceState, ListedInstance, RowCursor, StatementResult, StreamOptions, TransactionOptions } from "../engine.js";
import { INTERNAL_RESULT_LIMITS } from "../result-budget.js";
import { type RoundTripTarget, startRoundTrip } from "../round-trip-span.js";
import { activeTrace, endWith, type RequestTrace } from "../../tracing/request-trace.js";
import { sqlCommentFor, withSqlComment } from "../../tracing/sql-comment.js";
import { type CancelStrategy, SessionLifecycle, type StatementFailure } from "../session-lifecycle.js";
import type { EngineStatement } from "../engine-statement.js";
import type { StatementAnalysis } from "../sql-analysis.js";
import { ISOLATION_SQL } from "../transaction-sql.js";
import { type CancelTarget, sendCancelRequest } from "./cancel.js";
import { COMMIT_POSITION_SQL, CommitQuery, CommittedWriteQuery } from "./committed-write-query.js";
import { readerPositionsOf } from "../aurora-time-position.js";
import { AURORA_INSPECT_SQL, type PositionKnowledge, type PositionSource } from "./aurora-time-position.js";
import { isDatabaseError, isSessionFatal, mapStatementError } from "./errors.js";
import { type FunctionVolatility, VOLATILITY_SQL } from "./function-volatility.js";
import { DescribeQuery, PortalQuery } from "./portal-query.js";
import { PostgresRowCursor } from "./row-cursor.js";
import { type FieldDescription, type PreparedStatement, StatementQuery, type WireConnection } from "./statement-query.js";
import { READ_ONLY_INSTANCE_SQL } from "./read-only-instance.js";
import { SESSION_SETTINGS_SQL, sessionSettingsProblem } from "./session-settings.js";
import { columnDetails, encodeParams, parsersFor, parseTextArray, type ValueMode } from "./values.js";

export interface PostgresConnectionSettings {
  preparedCacheSize: number;
  /** After a cancel, how long to wait for the server before cutting the socket. */
  cancelGraceMs: number;
  /** Shared OID -> type name cache for the endpoint. */
  typeNames: Map<number, string>;
  /** The cluster's knowledge of function volatility (pg_proc). */
  volatility: FunctionVolatility;
  /** "aurora-dsql": one always-writable endpoint, without recovery state or WAL positions. */
  flavour?: "aurora-dsql" | undefined;
  /** Where positions come from on this cluster, learnt by the first inspection and shared by every session. */
  positions: PositionKnowledge;
}

interface PgInternals {
  processID: number;
  secretKey: number | Buffer;
  host: string;
  port: number;
  connection: WireConnection & { stream: { destroy(): void; remoteAddress?: string; remotePort?: number } };
  getTransactionStatus(): string | null;
}

const noop = (): void => undefined;

/** A CancelRequest has no answer: that it was carried out is known only when a statement ends cancelled. */
const PRESUMED_CARRIED_OUT = Promise.resolve(true);

/** Role, WAL position (written on a primary, replayed on a replica), replay age and instance-wide read-only, in one round trip. */
const INSPECT_SQL =
  "SELECT pg_is_in_recovery(), CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END::text, " +
  `(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()) * 1000)::float8, ${READ_ONLY_INSTANCE_SQL}`;

/** SQLSTATE 0A000 with this text: a cached statement's result type changed (ALTER TABLE...). */
const CACHED_PLAN_CHANGED = "cached plan must not change result type";

function isCachedPlanChange(err: unknown): boolean {
  return err instanceof GatewayError && err.database?.sqlstate === "0A000" && err.message.includes(CACHED_PLAN_CHANGED);
}

/** A statement's result, with its columns; a write that read its commit position carries it. */
function resultOf(query: StatementQuery, columns: StatementResult["columns"]): StatementResult {
  const fields = query.fields;
  const result: StatementResult = { command: query.command, columns, rows: query.rows, rowCount: query.rowCount, describeColumns: () => columnDetails(fields) };
  if (query instanceof CommittedWriteQuery && query.position !== null) result.commitPosition = query.position;
  return result;
}

export class PostgresConnection implements EngineConnection {
  reachedRole: "primary" | "replica" | undefined;
  reachedServerId: string | undefined;
  private readonly prepared = new Map<string, PreparedStatement>();
  private statementCounter = 0;
  private readonly internals: PgInternals;
  private readonly lifecycle: SessionLifecycle;
  /** The last CancelRequest sent: true once the server closed its socket, i.e. the backend was signalled. */
  private cancelDelivered: Promise<boolean> | undefined;

  constructor(
    readonly id: number,
    private readonly client: pg.Client,
    private readonly settings: PostgresConnectionSettings,
  ) {
    this.internals = client as unknown as PgInternals;
    this.lifecycle = new SessionLifecycle(this.cancelStrategy(), settings.cancelGraceMs);
    client.on("error", (err) => this.lifecycle.died(err));
    client.on("end", () => this.lifecycle.died(new Error("connection ended")));
  }

  get alive(): boolean {
    return this.lifecycle.alive;
  }

  get inTransaction(): boolean {
    return this.internals.getTransactionStatus() !== "I";
  }

  get needsReset(): boolean {
    return this.lifecycle.needsReset(this.inTransaction);
  }

  onDeath(listener: (cause: Error) => void): void {
    this.lifecycle.onDeath(listener);
  }

  /**
   * Not async: where nothing is to be learnt first (a session setting, a column type), the answer is
   * built in the turn the statement's result arrives, with no promise or turn of its own.
   */
  execute(statement: EngineStatement, options: ExecuteOptions): Promise<StatementResult> {
    return promiseFrom(() => {
      // Settings changed before this string (standard_conforming_strings...) may make the server split it otherwise than the reader.
      const readAsReaderDoes = !this.lifecycle.mayHoldState;
      const learning = this.noteSessionEffects(statement, options.timeoutMs);
      if (learning === undefined) return this.send(statement, options, readAsReaderDoes);
      return learning.then(() => this.send(statement, options, readAsReaderDoes));
    });
  }

  /** Sends a statement of the caller's and answers it; a cached statement the server refused for a changed result type is prepared again, once. */
  private send(statement: EngineStatement, options: ExecuteOptions, readAsReaderDoes: boolean): Promise<StatementResult> {
    const { sql, mode } = statement;
    const values = encodeParams(statement.params);
    const several = mode.text === "as written" || (mode.text === "in gateway transaction" && readAsReaderDoes);
    // A statement carrying a SQL comment is sent unnamed (never kept prepared: each one's traceparent
    // differs), so that the server shows this request's comment; its position is read separately.
    const commented = sqlCommentFor(activeTrace());
    const positioned = commented === undefined && mode.withCommitPosition && this.positionInline(statement.analysis);
    const readsOnly = this.readsOnly(statement.analysis);
    const changesNothing = !positioned && readsOnly && this.internals.getTransactionStatus() === "I";
    const sent = () => this.runStatement(this.statement(statement, values, options, several, positioned, commented), options.timeoutMs, changesNothing, !readsOnly);
    return sent().then(
      (query) => this.answerOf(query, options, mode.textValues),
      (err: unknown) => {
        if (!isCachedPlanChange(err)) throw err;
        // The server refused a cached statement whose result type changed (ALTER TABLE...) before
        // running it. Outside a transaction block it is re-prepared and sent again; inside one the
        // transaction is already aborted, so the error goes to the caller and the next attempt re-prepares.
        this.forgetStatement(sql);
        if (this.internals.getTransactionStatus() !== "I") throw err;
        return sent().then((query) => this.answerOf(query, options, mode.textValues));
      },
    );
  }

  /** A statement's result as the gateway answers it, once the types of its columns are known (learnt first when they are not). */
  private answerOf(query: StatementQuery, options: ExecuteOptions, textValues: boolean): StatementResult | Promise<StatementResult> {
    if (query.budget.overLimit) throw query.budget.tooLarge();
    const columns = this.columnsOf(query, false);
    if (columns !== null) return resultOf(query, columns);
    return this.learnTypes(query, options.timeoutMs, textValues).then(() => resultOf(query, this.columnsOf(query, true) ?? []));
  }

  /**
   * Whether a write's position can be read in its own round trip (committed-write-query.ts): on a
   * WAL-keeping primary session outside any transaction, for one statement the reader understood that
   * runs the same inside a transaction block (a plain query or DML), sent as a prepared statement.
   */
  private positionInline(analysis: StatementAnalysis): boolean {
    if (this.settings.flavour === "aurora-dsql" || this.settings.positions.source === "none" || this.settings.preparedCacheSize === 0) return false;
    if (this.internals.getTransactionStatus() !== "I") return false;
    return analysis.understood && analysis.statementCount === 1 && analysis.leavesNoState && !analysis.endsTransaction;
  }

  /**
   * A read by construction: the reader knows it only reads and leaves no state, and pg_proc (learnt
   * before it is sent) that every function it calls is not volatile. Outside a transaction block a
   * session lost under it applied nothing, so it may run again elsewhere; anywhere, an answer that
   * came as its cancel went out applied nothing (session-lifecycle.ts).
   */
  private readsOnly(analysis: StatementAnalysis): boolean {
    return analysis.intent === "read" && analysis.leavesNoState && this.settings.volatility.allStateless(analysis.functions);
  }

  /** Runs a statement; a pipelined write that failed inside its block leaves it rolled back. */
  private runStatement(query: StatementQuery, timeoutMs: number, changesNothing = false, mayApply = false): Promise<StatementQuery> {
    return query instanceof CommittedWriteQuery ? this.runCommittedWrite(query, timeoutMs, mayApply) : this.run(query, timeoutMs, changesNothing, mayApply);
  }

  /** A pipelined write (committed-write-query.ts): a failure that left its transaction block open is rolled back before the session goes on. */
  private async runCommittedWrite(query: CommittedWriteQuery, timeoutMs: number, mayApply: boolean): Promise<StatementQuery> {
    try {
      return await this.run(query, timeoutMs, false, mayApply);
    } catch (err) {
      if (query.transactionLeftOpen && this.lifecycle.alive) {
        await this.simple("ROLLBACK", timeoutMs).catch(() => undefined);
      }
      throw err;
    }
  }

  /**
   * One statement as a stream: described first when its result's fields are not known on this session
   * (so the columns, and the names of types not built in, are known before any row), then bound to
   * the unnamed portal and read `fetchRows` at a time (portal-query.ts). The whole stream runs under
   * the statement lifecycle, whose deadline counts only the time spent waiting for the database.
   */
  async stream(statement: EngineStatement, options: StreamOptions): Promise<RowCursor> {
    await this.noteSessionEffects(statement, options.timeoutMs);
    try {
      return await this.openStream(statement.sql, statement.params, options);
    } catch (err) {
      if (!isCachedPlanChange(err)) throw err;
      // As in execute: a cached statement whose result type changed is prepared again (outside a transaction block).
      this.forgetStatement(statement.sql);
      if (this.internals.getTransactionStatus() !== "I") throw err;
      return this.openStream(statement.sql, statement.params, options);
    }
  }

  private async openStream(sql: string, params: readonly Param[], options: StreamOptions): Promise<RowCursor> {
    const values = encodeParams(params);
    const prepared: PreparedStatement =
      this.settings.preparedCacheSize > 0 ? this.preparedStatement(sql) : { name: "", fields: undefined, columns: undefined, parsers: new Map() };
    let fields = prepared.fields;
    let columns = prepared.columns;
    if (fields === undefined || columns === undefined) {
      try {
        ({ fields, columns } = await this.describe(sql, prepared, options.timeoutMs));
      } catch (err) {
        this.forgetStatement(sql);
        throw err;
      }
    }
    const mode = options.bigNumbers;
    const portal = new PortalQuery(sql, values, prepared, fields, {
      fetchRows: options.fetchRows,
      maxRowBytes: options.maxRowBytes,
      parserKey: mode,
      parsersFor: (described) => parsersFor(mode, described, this.settings.typeNames),
    });
    const ran = this.lifecycle.run(options.timeoutMs, (control) => {
      portal.control = control;
      this.client.query(portal as unknown as pg.Submittable);
      return portal.done;
    });
    const cursor = new PostgresRowCursor(portal, ran, columns);
    await cursor.start();
    return cursor;
  }

  /** The statement's result fields and columns (type names looked up once per endpoint), kept on the prepared statement. */
  private async describe(sql: string, prepared: PreparedStatement, timeoutMs: number): Promise<{ fields: FieldDescription[]; columns: Column[] }> {
    const described = await this.lifecycle.run(
      timeoutMs,
      () =>
        new Promise<DescribeQuery>((resolve, reject) => {
          this.client.query(new DescribeQuery(sql, prepared, (err, done) => (err ? reject(err) : resolve(done))) as unknown as pg.Submittable);
        }),
    );
    const fields = described.fields;
    const names = this.settings.typeNames;
    await this.lookUpTypeNames([...new Set(fields.map((field) => field.dataTypeID))], timeoutMs);
    const columns = fields.map((field) => ({ name: field.name, type: names.get(field.dataTypeID) ?? `oid:${field.dataTypeID}` }));
    // Parsers made before the type names were known would read arrays of those types as text.
    prepared.parsers.clear();
    prepared.fields = fields;
    prepared.columns = columns;
    return { fields, columns };
  }

  /**
   * Marks the session for a reset unless the statement is known to leave no state: its kind (the
   * reader) and the volatility of every function it calls (pg_proc, looked up once per name). For a
   * read-only principal, volatile built-ins that act outside the transaction are refused.
   */
  private noteSessionEffects(statement: EngineStatement, timeoutMs: number): Promise<void> | undefined {
    // Aurora DSQL's concurrency control is optimistic and its supported SQL lists no advisory locks
    // (https://docs.aws.amazon.com/aurora-dsql/latest/userguide/working-with-postgresql-compatibility-supported-sql-features.html).
    if (this.settings.flavour !== "aurora-dsql") this.lifecycle.noteSessionLocksPossible();
    const analysis = statement.analysis;
    // Most statements call no function: decided without a round trip or a promise turn.
    if (analysis.functions.length === 0) {
      if (!analysis.leavesNoState) this.lifecycle.noteStateChange();
      return undefined;
    }
    return this.noteFunctionEffects(analysis, statement.mode.readOnlyPrincipal, timeoutMs);
  }

  private async noteFunctionEffects(analysis: StatementAnalysis, readOnlyPrincipal: boolean, timeoutMs: number): Promise<void> {
    const functions = analysis.functions;
    const volatility = this.settings.volatility;
    if (analysis.leavesNoState || readOnlyPrincipal) await this.learnFunctions(functions, timeoutMs);
    if (readOnlyPrincipal) {
      const refused = volatility.refusedForReadOnly(functions);
      if (refused !== undefined) {
        throw new GatewayError("FORBIDDEN", `this principal may only read: ${refused}() is a built-in function that acts outside the transaction (or assigns it a transaction id)`);
      }
    }
    if (!analysis.leavesNoState || !volatility.allStateless(functions)) this.lifecycle.noteStateChange();
  }

  /** Looks up functions pg_proc has not been asked about (one round trip); a failure leaves them unknown, i.e. volatile. */
  private async learnFunctions(names: readonly string[], timeoutMs: number): Promise<void> {
    const unknown = this.settings.volatility.unknown(names);
    if (unknown.length === 0) return;
    const query = new StatementQuery(VOLATILITY_SQL, encodeParams([unknown]), undefined, (fields) => parsersFor("string", fields), "string", INTERNAL_RESULT_LIMITS, noop);
    try {
      this.settings.volatility.record(unknown, (await this.run(query, timeoutMs)).rows);
    } catch (err) {
      // In a failed transaction the lookup is refused: the names stay unknown (volatile) for now.
      if (!isDatabaseRefusal(err)) throw err;
    }
  }

  /**
   * Prepared (named, cached) by default, so repeated statements skip parsing and planning on the
   * server; the simple protocol for strings the parser finds several statements in, where `several`
   * allows them.
   */
  private statement(statement: EngineStatement, values: unknown[], options: ExecuteOptions, several: boolean, positioned: boolean, commented?: RequestTrace): StatementQuery {
    const sql = statement.sql;
    const mode: ValueMode = statement.mode.textValues ? "text" : options.bigNumbers;
    if (positioned) {
      const limits = { maxBytes: options.maxResultBytes, maxRows: options.maxResultRows };
      return new CommittedWriteQuery(sql, values, this.preparedStatement(sql), (fields) => parsersFor(mode, fields, this.settings.typeNames), mode, limits, this.positionSource);
    }
    const extended = !several || values.length > 0 || statement.analysis.statementCount === 1;
    const prepared = extended && commented === undefined && this.settings.preparedCacheSize > 0 ? this.preparedStatement(sql) : undefined;
    return new StatementQuery(
      commented === undefined ? sql : withSqlComment(sql, commented),
      extended ? values : undefined,
      prepared,
      (fields) => parsersFor(mode, fields, this.settings.typeNames),
      mode,
      { maxBytes: options.maxResultBytes, maxRows: options.maxResultRows },
      noop,
    );
  }

  async begin(options: TransactionOptions, timeoutMs: number): Promise<void> {
    let sql = "BEGIN";
    if (options.isolation) sql += ` ISOLATION LEVEL ${ISOLATION_SQL[options.isolation]}`;
    if (options.readOnly || options.lockReadOnly) sql += " READ ONLY";
    if (options.deferrable) sql += " DEFERRABLE";
    await this.simple(sql, timeoutMs);
  }

  async commit(timeoutMs: number): Promise<"committed" | "rolled back"> {
    const result = await this.simple("COMMIT", timeoutMs, true);
    return result.command === "ROLLBACK" ? "rolled back" : "committed";
  }

  /**
   * COMMIT and the WAL insert position after it as one simple-protocol string: a transaction statement
   * in a string of several is committed before the next one starts, so the position is read after the
   * commit, as a separate read would be (committed-write-query.ts: CommitQuery).
   */
  async commitWithPosition(timeoutMs: number): Promise<{ ended: "committed" | "rolled back"; position: string | null }> {
    if (this.settings.flavour === "aurora-dsql" || this.settings.positions.source === "none") return { ended: await this.commit(timeoutMs), position: null };
    const query = (await this.run(new CommitQuery(this.positionSource), timeoutMs, false, true)) as CommitQuery;
    return { ended: query.ended, position: query.ended === "committed" ? query.position : null };
  }

  /** ROLLBACK; the session's advisory locks go in the same round trip when a caller's statement may have taken one. */
  async rollback(timeoutMs: number): Promise<void> {
    if (this.lifecycle.mayHoldSessionLocks) return this.releaseSessionLocks(timeoutMs);
    await this.simple("ROLLBACK", timeoutMs);
  }

  /**
   * Session-level advisory locks outlive ROLLBACK; pg_advisory_unlock_all releases them all (the
   * transaction-level ones end with the transaction). One simple-protocol string with the rollback:
   * https://www.postgresql.org/docs/current/functions-admin.html#FUNCTIONS-ADVISORY-LOCKS
   */
  async releaseSessionLocks(timeoutMs: number): Promise<void> {
    const rollback = this.internals.getTransactionStatus() !== "I" ? "ROLLBACK; " : "";
    await this.simple(`${rollback}SELECT pg_advisory_unlock_all()`, timeoutMs);
    this.lifecycle.noteSessionLocksReleased();
  }

  async inspect(timeoutMs: number): Promise<InstanceState> {
    if (this.settings.flavour === "aurora-dsql") return this.inspectDsql(timeoutMs);
    const known = this.settings.positions;
    if (known.source === "aurora-clock") return this.inspectAurora(timeoutMs);
    if (known.source === "none") {
      const roleOnly = await this.simple(`SELECT pg_is_in_recovery() OR ${READ_ONLY_INSTANCE_SQL}`, timeoutMs);
      return { role: roleOnly.rows[0]?.[0] === true ? "replica" : "primary", position: null, replayAgeMs: null, positionsRefused: known.refusal };
    }
    let query: StatementQuery;
    try {
      query = await this.simple(INSPECT_SQL, timeoutMs);
    } catch (err) {
      // Aurora refuses the WAL functions (0A000 and 55000, docs/aurora.md) and offers its own figures;
      // another flavour without them still has a role.
      if (!isDatabaseRefusal(err)) throw err;
      const { database, message } = err as GatewayError;
      // A session in a failed transaction refuses every statement (25P02, in_failed_sql_transaction):
      // that says nothing of the WAL functions, and must not leave the cluster without tokens for good.
      if (database?.sqlstate === "25P02") throw err;
      known.refusal = { sqlstate: database?.sqlstate ?? "", message };
      known.source = (await this.answersAurora(timeoutMs)) ? "aurora-clock" : "none";
      return this.inspect(timeoutMs);
    }
    known.source = "wal";
    const [recovering, position, replayAgeMs, readOnly] = (query.rows[0] ?? []) as [boolean, string | null, number | null, boolean | null];
    if (!recovering && readOnly === true) return { role: "replica", position: null, replayAgeMs: null };
    return { role: recovering ? "replica" : "primary", position, replayAgeMs: recovering ? replayAgeMs : null };
  }

  /** Where this session reads its tokens from: the WAL unless the cluster is known to be Aurora. */
  private get positionSource(): PositionSource {
    return this.settings.positions.source === "aurora-clock" ? "aurora-clock" : "wal";
  }

  private async answersAurora(timeoutMs: number): Promise<boolean> {
    return this.simple("SELECT aurora_db_instance_identifier()", timeoutMs).then(
      () => true,
      (err: unknown) => {
        if (isDatabaseRefusal(err)) return false;
        throw err;
      },
    );
  }

  /** Aurora PostgreSQL's figures (aurora-time-position.ts): positions in the writer's time, the reader's own lag. */
  private async inspectAurora(timeoutMs: number): Promise<InstanceState> {
    const query = await this.simple(AURORA_INSPECT_SQL, timeoutMs);
    const [recovering, serverId, writerMicros, listed, ownLagMs, readOnly] = (query.rows[0] ?? []) as [boolean, string, string, string | null, number | null, boolean | null];
    const positionsRefused = this.settings.positions.refusal;
    if (!recovering && readOnly === true) return { role: "replica", position: null, replayAgeMs: null, serverId, positionsRefused };
    if (recovering) return { role: "replica", position: null, replayAgeMs: ownLagMs, serverId, positionsRefused };
    return { role: "primary", position: `T${writerMicros}`, replayAgeMs: null, serverId, readerPositions: readerPositionsOf(listed), positionsRefused };
  }

  /**
   * Aurora DSQL is one regional endpoint that is always writable and has no recovery state or WAL
   * positions to ask for: its session is a primary once it proves alive, with the settings the
   * gateway reads values by (it starts without startup options, see session-settings.ts).
   */
  private async inspectDsql(timeoutMs: number): Promise<InstanceState> {
    const query = await this.simple(SESSION_SETTINGS_SQL, timeoutMs);
    const problem = sessionSettingsProblem(query.rows[0] ?? []);
    if (problem !== undefined) throw new Error(`Aurora DSQL: ${problem}`);
    return { role: "primary", position: null, replayAgeMs: null };
  }

  /** Aurora PostgreSQL's view of its instances: the writer is the row whose session is MASTER_SESSION_ID. */
  async listInstances(timeoutMs: number): Promise<ListedInstance[]> {
    if (this.settings.flavour === "aurora-dsql") throw new Error("Aurora DSQL has no instances to list: it is one regional endpoint");
    const query = await this.simple(
      "SELECT server_id::text, session_id = 'MASTER_SESSION_ID', replica_lag_in_msec::float8 FROM aurora_replica_status()",
      timeoutMs,
    );
    return query.rows.map((row) => {
      const [serverId, writer, lagMs] = row as [string, boolean, number | null];
      return { serverId, writer, lagMs };
    });
  }

  async commitPosition(timeoutMs: number): Promise<string | null> {
    // DSQL has no WAL position to wait for and no replicas to wait on: its writes carry no token.
    if (this.settings.flavour === "aurora-dsql") return null;
    if (this.settings.positions.source === "none") return null;
    const query = await this.simple(COMMIT_POSITION_SQL[this.positionSource], timeoutMs);
    return (query.rows[0]?.[0] as string | null | undefined) ?? null;
  }

  async ping(timeoutMs: number): Promise<void> {
    await this.simple("SELECT 1", timeoutMs);
  }

  reset(timeoutMs: number): Promise<boolean> {
    return this.lifecycle.reset(this, timeoutMs);
  }

  async resetFully(timeoutMs: number): Promise<void> {
    this.lifecycle.refuseResetWhileCancelPending();
    if (this.internals.getTransactionStatus() !== "I") await this.simple("ROLLBACK", timeoutMs);
    // DISCARD ALL drops settings, role, temporary objects, advisory locks, LISTENs, cursors, sequence
    // state and prepared statements. The gateway's own go too (another principal would see their text
    // in pg_prepared_statements), so the statement cache is forgotten with them.
    await this.simple("DISCARD ALL", timeoutMs);
    this.prepared.clear();
    this.internals.connection.parsedStatements = {};
    this.lifecycle.noteStateCleared();
  }

  async close(): Promise<void> {
    this.lifecycle.closed();
    await this.client.end().catch(() => undefined);
  }

  destroy(): void {
    this.lifecycle.closed();
    this.internals.connection.stream.destroy();
  }

  /** The gateway's own SQL; `mayApply` for what commits (a late answer to it is an unknown outcome, session-lifecycle.ts). */
  private simple(sql: string, timeoutMs: number, mayApply = false): Promise<StatementQuery> {
    return this.run(
      new StatementQuery(sql, undefined, undefined, (fields) => parsersFor("string", fields), "string", INTERNAL_RESULT_LIMITS, noop),
      timeoutMs,
      false,
      mayApply,
    );
  }

  /** Submits a query under its deadline (the shared lifecycle cancels it on the server, then cuts). */
  private run(query: StatementQuery, timeoutMs: number, changesNothing = false, mayApply = false): Promise<StatementQuery> {
    const span = startRoundTrip(query.text, this.roundTripTarget);
    const sent = this.submit(query, timeoutMs, changesNothing, mayApply);
    return span === undefined ? sent : endWith(span, sent, (done, ended) => ended.setAttribute("db.response.returned_rows", done.rows.length));
  }

  /** Where this session's round trips go, for their spans. */
  private readonly roundTripTarget = (): RoundTripTarget => ({
    system: "postgresql",
    namespace: this.client.database ?? "",
    address: this.internals.host,
    port: this.internals.port,
  });

  private submit(query: StatementQuery, timeoutMs: number, changesNothing: boolean, mayApply: boolean): Promise<StatementQuery> {
    return this.lifecycle.run(
      timeoutMs,
      () =>
        new Promise<StatementQuery>((resolve, reject) => {
          query.callback = (err, done) => (err ? reject(err) : resolve(done));
          this.client.query(query as unknown as pg.Submittable);
        }),
      changesNothing,
      mayApply,
    );
  }

  /**
   * PostgreSQL's way to stop a statement: a CancelRequest on a side socket. One that goes out as its
   * statement ends on its own would stop whatever the session runs next (a cancel is a signal to the
   * backend, not to a statement), and read there as the server's error: so a late one is awaited until
   * the server closed its socket, which it does once the backend was signalled (cancel.ts). The
   * backend then waits for the next command, and ignores a cancel that arrives while it does.
   */
  private cancelStrategy(): CancelStrategy {
    return {
      name: "CancelRequest",
      cancel: (graceMs) => {
        this.cancelDelivered = sendCancelRequest(this.cancelTarget(), graceMs);
        return PRESUMED_CARRIED_OUT;
      },
      cut: () => this.destroy(),
      classify: classifyFailure,
      absorbLateCancel: () => this.cancelDelivered ?? Promise.resolve(false),
    };
  }

  /** The instance this session is on: its socket's peer address, not a name that may have moved since. */
  private cancelTarget(): CancelTarget {
    const { host, port, processID, secretKey } = this.internals;
    const stream = this.internals.connection.stream;
    if (stream.remoteAddress && stream.remotePort) {
      return { host: stream.remoteAddress, port: stream.remotePort, processId: processID, secretKey };
    }
    return { host, port, processId: processID, secretKey };
  }

  private preparedStatement(sql: string): PreparedStatement {
    const cached = this.prepared.get(sql);
    if (cached !== undefined) {
      // Map order is the LRU order: move to the most recent end.
      this.prepared.delete(sql);
      this.prepared.set(sql, cached);
      return cached;
    }
    if (this.prepared.size >= this.settings.preparedCacheSize) {
      const oldest = this.prepared.keys().next().value;
      if (oldest !== undefined) this.forgetStatement(oldest);
    }
    const statement: PreparedStatement = {
      name: `poolgate_${++this.statementCounter}`,
      fields: undefined,
      columns: undefined,
      parsers: new Map(),
    };
    this.prepared.set(sql, statement);
    return statement;
  }

  private forgetStatement(sql: string): void {
    const statement = this.prepared.get(sql);
    if (!statement) return;
    this.prepared.delete(sql);
    const parsed = this.internals.connection.parsedStatements;
    if (parsed[statement.name] === undefined) return;
    delete parsed[statement.name];
    // Queued ahead of the caller's statement; a failure (aborted transaction) only leaves it unused.
    this.client.query(`DEALLOCATE ${statement.name}`).catch(() => undefined);
  }

  /** Column names and types, or null when a type name is not known yet (and `partial` is false). */
  private columnsOf(query: StatementQuery, partial: boolean): Column[] | null {
    const prepared = query.name === undefined ? undefined : this.prepared.get(query.text);
    if (prepared?.columns && prepared.fields === query.fields) return prepared.columns;
    const names = this.settings.typeNames;
    let complete = true;
    const columns = query.fields.map((field) => {
      const type = names.get(field.dataTypeID);
      if (type === undefined) complete = false;
      return { name: field.name, type: type ?? `oid:${field.dataTypeID}` };
    });
    if (!complete) return partial ? columns : null;
    if (prepared) prepared.columns = columns;
    return columns;
  }

  /** First sight of non-built-in types: learn their names, and parse arrays of them as arrays. */
  private async learnTypes(query: StatementQuery, timeoutMs: number, textValues: boolean): Promise<void> {
    const names = this.settings.typeNames;
    const unknown = new Set(query.fields.filter((field) => !names.has(field.dataTypeID)).map((field) => field.dataTypeID));
    await this.lookUpTypeNames([...unknown], timeoutMs);
    // Values wanted as the server printed them stay text, arrays included.
    if (textValues) return;
    const arrays = query.fields.flatMap((field, i) =>
      unknown.has(field.dataTypeID) && names.get(field.dataTypeID)?.startsWith("_") ? [i] : [],
    );
    if (arrays.length === 0) return;
    for (const row of query.rows) {
      for (const i of arrays) {
        const value = row[i];
        if (typeof value === "string") row[i] = parseTextArray(value);
      }
    }
    if (query.name !== undefined) this.prepared.get(query.text)?.parsers.clear();
  }

  /** Type names not built in are looked up once per endpoint. */
  private async lookUpTypeNames(oids: number[], timeoutMs: number): Promise<void> {
    const names = this.settings.typeNames;
    const unknown = oids.filter((oid) => !names.has(oid));
    if (unknown.length === 0 || this.internals.getTransactionStatus() === "E") return;
    try {
      // OIDs are integers from the server's own row description, so they are safe to inline.
      const query = await this.simple(`SELECT oid::int4, typname FROM pg_catalog.pg_type WHERE oid IN (${unknown.map(Number).join(",")})`, timeoutMs);
      for (const row of query.rows) names.set(row[0] as number, row[1] as string);
    } catch {
      // Type names are a courtesy: the values are already parsed.
    }
  }
}

/** SQLSTATE query_canceled: a CancelRequest's, or the server's own statement_timeout. */
const QUERY_CANCELED = "57014";

/**
 * 57014 is a cancelled statement: ours once the deadline passed, or the server's own statement_timeout.
 * A FATAL or PANIC error ends the session, as does anything that is not a database error.
 */
function classifyFailure(err: unknown, timedOut: boolean): StatementFailure {
  if (isDatabaseError(err) && !isSessionFatal(err)) {
    if (err.code === QUERY_CANCELED && (timedOut || err.message.includes("statement timeout"))) return { kind: "cancelled", cause: err };
    return { kind: "refused", error: mapStatementError(err) };
  }
  return { kind: "session lost", cause: err instanceof Error ? err : new Error(String(err)) };
}
