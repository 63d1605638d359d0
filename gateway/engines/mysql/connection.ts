/**
 * One MySQL/MariaDB session through `mysql2`, as the pool sees it. Owns: statements run as prepared
 * statements when they carry parameters (mysql2 caches them per connection) and as plain queries
 * otherwise, rows converted and size-bounded while they stream in, session-state tracking and reset
 * (COM_RESET_CONNECTION), role and GTID position checks, and MySQL's part of the shared session
 * lifecycle (session-lifecycle.ts): a timed-out statement is stopped with KILL QUERY from a side
 * session, a late KILL is absorbed by a no-op, and errors are read by error number.
 */
import type { Connection } from "mysql2";
import type { Param } from "../../../schemas/query.js";
import { GatewayError } from "../../errors.js";
import { isDatabaseRefusal } from "../../failure-meaning.js";
import { promiseFrom } from "../../promise-from.js";
import type { EngineConnection, ExecuteOptions, InstanceState, ListedInstance, RowCursor, StatementResult, StreamOptions, TransactionOptions } from "../engine.js";
import { INTERNAL_RESULT_LIMITS } from "../result-budget.js";
import { type CancelStrategy, SessionLifecycle, type StatementFailure } from "../session-lifecycle.js";
import type { EngineStatement } from "../engine-statement.js";
import { ISOLATION_SQL } from "../transaction-sql.js";
import { INTERRUPTED, isServerError, mapStatementError, type MysqlDriverError } from "./errors.js";
import { deliverEvents, type Mysql2Command } from "./command-events.js";
import { readerPositionsOf } from "../aurora-time-position.js";
import { AURORA_MYSQL_COMMIT_POSITION_SQL, AURORA_MYSQL_INSPECT_SQL, AURORA_MYSQL_OWN_LAG_SQL, AURORA_MYSQL_PROBE_SQL, type AuroraKnowledge } from "./aurora-sql.js";
import { ResultCollector, type ResultSetHeader } from "./result-collector.js";
import { MysqlRowCursor } from "./row-cursor.js";
import { ResultShapes } from "./result-shapes.js";
import { columnDetails, encodeParams } from "./values.js";
import { type RoundTripTarget, startRoundTrip } from "../round-trip-span.js";
import { activeTrace, endWith } from "../../tracing/request-trace.js";
import { sqlCommentFor, withSqlComment } from "../../tracing/sql-comment.js";

export type MysqlFlavour = "mariadb" | "mysql";

export interface MysqlConnectionSettings {
  flavour: MysqlFlavour;
  /** After a KILL QUERY, how long to wait for the statement to end before cutting the socket. */
  cancelGraceMs: number;
  /** Sends KILL QUERY <threadId> to the instance at host:port from a side session. */
  killQuery(host: string, port: number, threadId: number, timeoutMs: number): Promise<void>;
  /** Statements that put a fresh (or reset) session into the state the conversions expect. */
  sessionSetup: string;
  /** Whether the cluster is Aurora MySQL (time positions, aurora-sql.ts), shared by the cluster's sessions. */
  aurora: AuroraKnowledge;
}

interface Mysql2Internals {
  threadId: number;
  stream: { destroy(): void; remoteAddress?: string; remotePort?: number };
  config: { host?: string; port?: number; database?: string };
}

const SERVER_STATUS_IN_TRANS = 1;
/** Deadlock: the server rolled the whole transaction back. */
const DEADLOCK = 1213;
/** Lock-wait timeout: the server undid the statement only; the gateway rolls the transaction back too. */
const LOCK_WAIT_TIMEOUT = 1205;
/** Releases the session's GET_LOCK locks: https://mariadb.com/kb/en/release_all_locks/ */
const RELEASE_LOCKS = "DO RELEASE_ALL_LOCKS()";

const INSPECT_SQL: Record<MysqlFlavour, string> = {
  mariadb: "SELECT @@global.read_only OR @@global.innodb_read_only, NULLIF(@@global.gtid_current_pos, '')",
  mysql: "SELECT @@global.read_only OR @@global.innodb_read_only, IF(@@global.gtid_mode = 'ON', NULLIF(@@global.gtid_executed, ''), NULL)",
};

/** The session's own last transaction (MariaDB), or everything the server executed (MySQL). */
const COMMIT_POSITION_SQL: Record<MysqlFlavour, string> = {
  mariadb: "SELECT NULLIF(@@session.last_gtid, '')",
  mysql: "SELECT IF(@@global.gtid_mode = 'ON', NULLIF(@@global.gtid_executed, ''), NULL)",
};

/** Aurora MySQL's instance list; entries not updated for five minutes are stale (the AWS wrapper's rule). */
const LIST_INSTANCES_SQL =
  "SELECT SERVER_ID, SESSION_ID = 'MASTER_SESSION_ID', REPLICA_LAG_IN_MILLISECONDS FROM information_schema.replica_host_status " +
  "WHERE SESSION_ID = 'MASTER_SESSION_ID' OR TIME_TO_SEC(TIMEDIFF(NOW(), LAST_UPDATE_TIMESTAMP)) <= 300";


/** For the gateway's own statements: exact values, small results. */
const INTERNAL: ExecuteOptions = { timeoutMs: 0, bigNumbers: "string", maxResultBytes: INTERNAL_RESULT_LIMITS.maxBytes, maxResultRows: INTERNAL_RESULT_LIMITS.maxRows };

/**
 * mysql2's positional forms without a callback, which answer the command (an event emitter): its types
 * list them only with a callback. Positional, not an options object, which mysql2 copies by spreading
 * on every call.
 */
interface PositionalCommands {
  execute(sql: string, values: unknown[]): Mysql2Command;
  query(sql: string): Mysql2Command;
}

/** Statement texts whose result columns and converters a session keeps (bounded; the oldest goes first). */
const RESULT_SHAPES_KEPT = 256;

/**
 * The GTID a committed write produced, as MariaDB reported it in the write's own OK packet (the
 * session tracks `last_gtid`: engine.ts); undefined when the packet carries none (no binary log, a
 * write that logged nothing, MySQL), and the caller reads the position separately.
 */
function trackedGtid(header: ResultSetHeader | undefined): string | undefined {
  const changes = (header as { stateChanges?: { systemVariables?: Record<string, string> } } | undefined)?.stateChanges;
  const gtid = changes?.systemVariables?.last_gtid;
  return gtid === undefined || gtid === "" ? undefined : gtid;
}

/** SELECT, INSERT... from the statement's first keyword, as PostgreSQL reports its command tags. */
function commandOf(sql: string): string {
  const match = /^(?:\s+|--[^\n]*\n|#[^\n]*\n|\/\*[\s\S]*?\*\/|\()*([A-Za-z]+)/.exec(sql);
  return match?.[1]?.toUpperCase() ?? "";
}

export class MysqlConnection implements EngineConnection {
  reachedRole: "primary" | "replica" | undefined;
  reachedServerId: string | undefined;
  private transactionOpen = false;
  /** The server rolled the open transaction back (deadlock): COMMIT must not report success. */
  private rolledBackByServer = false;
  private positionsUnsupported = false;
  private auroraLagUnsupported = false;
  /** How to put back the role the session logged in with (COM_RESET_CONNECTION keeps MariaDB's); null: no roles. */
  private restoreRole: string | null = null;
  /** Rejects the statement in flight when the session dies (mysql2 reports that on the connection). */
  private failInFlight: ((err: Error) => void) | undefined;
  private readonly internals: Mysql2Internals;
  private readonly lifecycle: SessionLifecycle;
  /** Columns and converters per statement text, reused while the server describes its result alike. */
  private readonly shapes = new ResultShapes(RESULT_SHAPES_KEPT);
  /** A statement's promise settled: the session's death no longer concerns it (its reject is let go, and its result with it). */
  private readonly statementSettled = (reject: (err: Error) => void): void => {
    if (this.failInFlight === reject) this.failInFlight = undefined;
  };
  /** Reads an OK packet's status flags: whether the session is in a transaction now. */
  private readonly noteServerStatus = (serverStatus: number): void => {
    this.transactionOpen = (serverStatus & SERVER_STATUS_IN_TRANS) !== 0;
  };
  private get commands(): PositionalCommands {
    return this.connection as unknown as PositionalCommands;
  }

  constructor(
    readonly id: number,
    private readonly connection: Connection,
    private readonly settings: MysqlConnectionSettings,
  ) {
    this.internals = connection as unknown as Mysql2Internals;
    this.lifecycle = new SessionLifecycle(this.cancelStrategy(), settings.cancelGraceMs);
    connection.on("error", (err: Error) => this.markDead(err));
    connection.on("end", () => this.markDead(new Error("connection ended")));
  }

  get alive(): boolean {
    return this.lifecycle.alive;
  }

  get inTransaction(): boolean {
    return this.transactionOpen;
  }

  get needsReset(): boolean {
    return this.lifecycle.needsReset(this.transactionOpen || this.rolledBackByServer);
  }

  onDeath(listener: (cause: Error) => void): void {
    this.lifecycle.onDeath(listener);
  }

  /**
   * Not async: the answer is built in the turn the statement's result arrives (resultOf), with no
   * promise or turn of its own; a failure goes through afterConflict first.
   */
  execute(statement: EngineStatement, options: ExecuteOptions): Promise<StatementResult> {
    const wasInTransaction = this.transactionOpen;
    return promiseFrom(() => this.send(statement, options)).then(
      (collected) => this.resultOf(collected, statement),
      (err: unknown) =>
        this.afterConflict(err, wasInTransaction, options.timeoutMs).then(() => {
          throw err;
        }),
    );
  }

  /** Sends a statement of the caller's (prepared where it must be), noting what it may leave in the session. */
  private send(statement: EngineStatement, options: ExecuteOptions): Promise<ResultCollector> {
    if (this.rolledBackByServer) {
      // MySQL would run this in autocommit mode, outside the transaction the caller believes is open.
      throw new GatewayError("TRANSACTION_ABORTED", "the database rolled this transaction back after a conflict; roll it back and run it again from the start");
    }
    this.lifecycle.noteSessionLocksPossible();
    const { sql, params, analysis, mode } = statement;
    // In a gateway transaction, text is sent as text only where the server splits it as the reader
    // does: in a session no setting (sql_mode, character set) has changed, and without a statement
    // in the string that could change one for the statements after it.
    const mustPrepare =
      mode.text === "one statement" || (mode.text === "in gateway transaction" && (this.lifecycle.mayHoldState || (analysis.statementCount > 1 && !analysis.leavesNoState)));
    if (!analysis.leavesNoState) this.lifecycle.noteStateChange();
    // A read by construction (the reader: reads only, every function known stateless) outside any
    // transaction: a session lost under it applied nothing. A statement the reader knows only reads
    // applied nothing if it answered as its cancel went out (session-lifecycle.ts).
    const changesNothing = !this.transactionOpen && analysis.intent === "read" && analysis.leavesNoState;
    const prepared = params.length > 0 || (mustPrepare && !analysis.savepointOnly);
    const commented = sqlCommentFor(activeTrace());
    if (commented === undefined) return this.run(sql, params, options, prepared, changesNothing, analysis.intent !== "read", mode.textValues);
    // A commented statement's text is this request's alone: one that was prepared is closed once it ran
    // (COM_STMT_CLOSE, no answer), so that mysql2's statement cache keeps only callers' texts.
    const text = withSqlComment(sql, commented);
    const ran = this.run(text, params, options, prepared, changesNothing, analysis.intent !== "read", mode.textValues);
    if (!prepared) return ran;
    const close = () => {
      if (this.lifecycle.alive) this.connection.unprepare(text);
    };
    return ran.finally(close);
  }

  /** A collected statement as the gateway answers it (a CALL by its last result set; a write by its header). */
  private resultOf(collected: ResultCollector, statement: EngineStatement): StatementResult {
    if (collected.budget.overLimit) throw collected.budget.tooLarge();
    const command = commandOf(statement.sql);
    const resultSet = command === "CALL" ? collected.lastResultSet : undefined;
    if (resultSet) {
      const fields = resultSet.fields;
      return { command, columns: resultSet.columns, rows: resultSet.rows, rowCount: resultSet.rows.length, describeColumns: () => columnDetails(fields) };
    }
    if (collected.fields) {
      const fields = collected.fields;
      return { command, columns: collected.columns, rows: collected.rows, rowCount: collected.rows.length, describeColumns: () => columnDetails(fields) };
    }
    const header = collected.header;
    const insertId = header && Number(header.insertId) !== 0 ? String(header.insertId) : undefined;
    const result: StatementResult = { command, columns: [], rows: [], rowCount: header?.affectedRows ?? null, ...(insertId ? { lastInsertId: insertId } : {}) };
    if (statement.mode.withCommitPosition && !this.transactionOpen) {
      const position = trackedGtid(header);
      if (position !== undefined) result.commitPosition = position;
    }
    return result;
  }

  /**
   * One statement as a stream (row-cursor.ts): prepared when it carries parameters or the caller is a
   * read-only principal (one statement, enforced by the server), else sent as text. A CALL may answer
   * several result sets, which a stream cannot carry: it is refused.
   */
  async stream(statement: EngineStatement, options: StreamOptions): Promise<RowCursor> {
    const { sql, params } = statement;
    if (this.rolledBackByServer) {
      throw new GatewayError("TRANSACTION_ABORTED", "the database rolled this transaction back after a conflict; roll it back and run it again from the start");
    }
    const command = commandOf(sql);
    if (command === "CALL") throw new GatewayError("INVALID_REQUEST", "a CALL may answer several result sets, which a stream cannot carry; use /v1/query");
    this.lifecycle.noteSessionLocksPossible();
    if (!statement.analysis.leavesNoState) this.lifecycle.noteStateChange();
    const prepared = params.length > 0 || statement.mode.readOnlyPrincipal;
    const cursor = new MysqlRowCursor(this.connection, command, options, this.noteServerStatus);
    this.failInFlight = (cause) => cursor.abort(cause);
    try {
      await cursor.start(
        (submit) => this.lifecycle.run(options.timeoutMs, submit),
        () => (prepared ? this.commands.execute(sql, encodeParams(params)) : this.commands.query(sql)),
      );
    } catch (err) {
      this.failInFlight = undefined;
      throw err;
    }
    return {
      get columns() {
        return cursor.columns;
      },
      get summary() {
        return cursor.summary;
      },
      next: () => cursor.next(),
      close: async () => {
        await cursor.close();
        this.failInFlight = undefined;
      },
    };
  }

  /**
   * A conflict inside a transaction ends it on both engines alike: a deadlock already rolled it back
   * on the server; after a lock-wait timeout (which undid only the statement) it is rolled back here.
   */
  private async afterConflict(err: unknown, wasInTransaction: boolean, timeoutMs: number): Promise<void> {
    const code = err instanceof GatewayError ? err.database?.engineCode : undefined;
    if (!wasInTransaction || (code !== DEADLOCK && code !== LOCK_WAIT_TIMEOUT) || !this.lifecycle.alive) return;
    if (code === LOCK_WAIT_TIMEOUT) await this.simple("ROLLBACK", timeoutMs).catch(() => undefined);
    this.rolledBackByServer = true;
  }

  async begin(options: TransactionOptions, timeoutMs: number): Promise<void> {
    // SET TRANSACTION (without SESSION) applies to the next transaction only.
    const isolation = options.isolation ? `SET TRANSACTION ISOLATION LEVEL ${ISOLATION_SQL[options.isolation]}; ` : "";
    // The session default as well: a statement that commits implicitly (DDL) ends the transaction and
    // then runs in a transaction of its own, which must be READ ONLY too. COM_RESET_CONNECTION undoes it.
    const sessionDefault = options.lockReadOnly ? "SET SESSION TRANSACTION READ ONLY; " : "";
    if (options.lockReadOnly) this.lifecycle.noteStateChange();
    this.transactionOpen = true;
    this.rolledBackByServer = false;
    await this.simple(`${sessionDefault}${isolation}START TRANSACTION${options.readOnly || options.lockReadOnly ? " READ ONLY" : ""}`, timeoutMs);
  }

  /**
   * MySQL keeps a transaction open after a failed statement (only that statement is undone), so
   * COMMIT commits the statements that succeeded; only a transaction the server itself rolled back
   * (a deadlock) is reported as "rolled back".
   */
  async commit(timeoutMs: number): Promise<"committed" | "rolled back"> {
    return (await this.commitWithPosition(timeoutMs, false)).ended;
  }

  /** COMMIT; the position from its own OK packet where MariaDB tracks it (trackedGtid), else read after it. */
  async commitWithPosition(timeoutMs: number, readPosition = true): Promise<{ ended: "committed" | "rolled back"; position: string | null }> {
    if (this.rolledBackByServer) {
      await this.rollback(timeoutMs);
      return { ended: "rolled back", position: null };
    }
    // A COMMIT answered just as its cancel went out may have committed: an unknown outcome (session-lifecycle.ts).
    const committed = await this.run("COMMIT", [], Object.assign({}, INTERNAL, { timeoutMs }), false, false, true);
    this.transactionOpen = false;
    if (!readPosition) return { ended: "committed", position: null };
    const position = trackedGtid(committed.header) ?? (await this.commitPosition(timeoutMs).catch(() => null));
    return { ended: "committed", position };
  }

  /** ROLLBACK; the session's GET_LOCK locks go in the same round trip when a caller's statement may have taken one. */
  async rollback(timeoutMs: number): Promise<void> {
    await this.simple(this.lifecycle.mayHoldSessionLocks ? `ROLLBACK; ${RELEASE_LOCKS}` : "ROLLBACK", timeoutMs);
    this.transactionOpen = false;
    this.rolledBackByServer = false;
    this.lifecycle.noteSessionLocksReleased();
  }

  /**
   * GET_LOCK locks belong to the session and outlive ROLLBACK; RELEASE_ALL_LOCKS() releases them all
   * (MySQL 5.7+, MariaDB 10.5+), in the same round trip as the rollback of an open transaction.
   */
  async releaseSessionLocks(timeoutMs: number): Promise<void> {
    if (this.transactionOpen || this.rolledBackByServer) return this.rollback(timeoutMs);
    await this.simple(RELEASE_LOCKS, timeoutMs);
    this.lifecycle.noteSessionLocksReleased();
  }

  async inspect(timeoutMs: number): Promise<InstanceState> {
    if (await this.isAurora(timeoutMs)) return this.inspectAurora(timeoutMs);
    const sql = this.positionsUnsupported ? "SELECT @@global.read_only OR @@global.innodb_read_only, NULL" : INSPECT_SQL[this.settings.flavour];
    let row: unknown[];
    try {
      row = await this.firstRow(sql, timeoutMs);
    } catch (err) {
      // A flavour without GTID variables still has a role.
      if (this.positionsUnsupported || !isDatabaseRefusal(err)) throw err;
      this.positionsUnsupported = true;
      return this.inspect(timeoutMs);
    }
    const role = Number(row[0]) === 1 ? "replica" : "primary";
    const position = (row[1] as string | null) ?? null;
    return { role, position, replayAgeMs: role === "replica" ? await this.replicationDelayMs(timeoutMs) : null };
  }

  /**
   * The replica's own account of its delay, in ms: Seconds_Behind_Master/Source of a binlog replica,
   * else Aurora MySQL's REPLICA_LAG_IN_MILLISECONDS for this instance; null when neither answers.
   */
  private async replicationDelayMs(timeoutMs: number): Promise<number | null> {
    const status = await this.run(this.settings.flavour === "mariadb" ? "SHOW SLAVE STATUS" : "SHOW REPLICA STATUS", [], Object.assign({}, INTERNAL, { timeoutMs })).catch(
      () => undefined,
    );
    if (status?.fields && status.rows.length > 0) {
      const at = status.fields.findIndex((field) => field.name === "Seconds_Behind_Master" || field.name === "Seconds_Behind_Source");
      const seconds = status.rows[0]?.[at];
      return seconds === null || seconds === undefined ? null : Number(seconds) * 1000;
    }
    if (this.settings.flavour === "mariadb" || this.auroraLagUnsupported) return null;
    try {
      const row = await this.firstRow(AURORA_MYSQL_OWN_LAG_SQL, timeoutMs);
      return row[0] === null || row[0] === undefined ? null : Number(row[0]);
    } catch {
      this.auroraLagUnsupported = true;
      return null;
    }
  }

  /**
   * Aurora MySQL, asked once per cluster (MariaDB never is): its readers have no GTID position, so
   * positions are the writer's time (aurora-sql.ts).
   */
  private async isAurora(timeoutMs: number): Promise<boolean> {
    const known = this.settings.aurora;
    if (known.aurora !== undefined) return known.aurora;
    if (this.settings.flavour === "mariadb") return (known.aurora = false);
    known.aurora = await this.firstRow(AURORA_MYSQL_PROBE_SQL, timeoutMs).then(
      () => true,
      (err: unknown) => {
        if (isDatabaseRefusal(err)) return false;
        throw err;
      },
    );
    return known.aurora;
  }

  /** Aurora MySQL's figures: the writer's clock as its position, each reader's as the writer lists it, a reader's own lag. */
  private async inspectAurora(timeoutMs: number): Promise<InstanceState> {
    const [readOnly, serverId, writerMicros, listed, ownLagMs, listedAsWriter] = (await this.firstRow(AURORA_MYSQL_INSPECT_SQL, timeoutMs)) as [
      number | string,
      string,
      string,
      string | null,
      number | string | null,
      number | string | null,
    ];
    if (Number(readOnly) === 1) {
      const lagKnown = ownLagMs !== null && Number(listedAsWriter) !== 1;
      return { role: "replica", position: null, replayAgeMs: lagKnown ? Number(ownLagMs) : null, serverId: String(serverId) };
    }
    return { role: "primary", position: `T${writerMicros}`, replayAgeMs: null, serverId: String(serverId), readerPositions: readerPositionsOf(listed) };
  }

  async listInstances(timeoutMs: number): Promise<ListedInstance[]> {
    const collected = await this.run(LIST_INSTANCES_SQL, [], Object.assign({}, INTERNAL, { timeoutMs }));
    return collected.rows.map((row) => {
      const [serverId, writer, lagMs] = row as [string, number | string, number | string | null];
      return { serverId: String(serverId), writer: Number(writer) === 1, lagMs: lagMs === null ? null : Number(lagMs) };
    });
  }

  async commitPosition(timeoutMs: number): Promise<string | null> {
    if (await this.isAurora(timeoutMs)) return ((await this.firstRow(AURORA_MYSQL_COMMIT_POSITION_SQL, timeoutMs))[0] as string | null) ?? null;
    if (this.positionsUnsupported) return null;
    const row = await this.firstRow(COMMIT_POSITION_SQL[this.settings.flavour], timeoutMs);
    return (row[0] as string | null) ?? null;
  }

  async ping(timeoutMs: number): Promise<void> {
    await this.simple("SELECT 1", timeoutMs);
  }

  /** Applies the session settings the conversions expect (after connect and after a reset). */
  async setUpSession(timeoutMs: number): Promise<void> {
    await this.simple(this.settings.sessionSetup, timeoutMs);
  }

  /** Right after connecting: notes the role the login starts with, so a full reset can put it back. */
  async noteInitialRole(timeoutMs: number): Promise<void> {
    let role: unknown;
    try {
      [role] = await this.firstRow("SELECT CURRENT_ROLE()", timeoutMs);
    } catch (err) {
      if (isDatabaseRefusal(err)) return; // a server without roles (MySQL 5.7)
      throw err;
    }
    if (this.settings.flavour === "mysql") this.restoreRole = "SET ROLE DEFAULT";
    else this.restoreRole = typeof role === "string" ? `SET ROLE \`${role.replace(/`/g, "``")}\`` : "SET ROLE NONE";
  }

  /**
   * An open transaction alone is rolled back; anything else (variables, temporary tables, locks,
   * prepared statements, user variables) takes the full reset.
   */
  reset(timeoutMs: number): Promise<boolean> {
    return this.lifecycle.reset(this, timeoutMs);
  }

  /**
   * COM_RESET_CONNECTION (variables, warnings and errors, temporary tables, GET_LOCK locks, prepared
   * statements, an open transaction), then the session settings and the login's role again.
   */
  async resetFully(timeoutMs: number): Promise<void> {
    this.lifecycle.refuseResetWhileCancelPending();
    await this.withTimeout(
      new Promise<void>((resolve, reject) => {
        this.failInFlight = reject;
        this.connection.reset((err: unknown) => (err ? reject(err instanceof Error ? err : new Error("COM_RESET_CONNECTION failed")) : resolve()));
      }),
      timeoutMs,
      "COM_RESET_CONNECTION",
    );
    this.transactionOpen = false;
    this.rolledBackByServer = false;
    const setup = this.restoreRole === null ? this.settings.sessionSetup : `${this.settings.sessionSetup}; ${this.restoreRole}`;
    await this.simple(setup, timeoutMs);
    this.lifecycle.noteStateCleared();
  }

  async close(): Promise<void> {
    if (!this.lifecycle.alive) return;
    this.lifecycle.closed();
    await new Promise<void>((resolve) => {
      const cut = setTimeout(() => {
        this.internals.stream.destroy();
        resolve();
      }, 1000);
      this.connection.end(() => {
        clearTimeout(cut);
        resolve();
      });
    });
  }

  destroy(): void {
    this.lifecycle.closed();
    this.internals.stream.destroy();
  }

  /** The connection reported its end: the statement in flight fails with it, and the session is dead. */
  private markDead(cause: Error): void {
    this.failInFlight?.(cause);
    this.lifecycle.died(cause);
  }

  private async firstRow(sql: string, timeoutMs: number): Promise<unknown[]> {
    const collected = await this.run(sql, [], Object.assign({}, INTERNAL, { timeoutMs }));
    return collected.rows[0] ?? [];
  }

  private async simple(sql: string, timeoutMs: number): Promise<void> {
    await this.run(sql, [], Object.assign({}, INTERNAL, { timeoutMs }));
  }

  /** A non-statement command (reset) bounded by a timeout: a silent server costs the session. */
  private async withTimeout<T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T> {
    const timer = setTimeout(() => {
      this.destroy();
      this.failInFlight?.(new Error(`${what} got no answer within ${timeoutMs}ms`));
    }, timeoutMs);
    try {
      return await work;
    } finally {
      clearTimeout(timer);
      this.failInFlight = undefined;
    }
  }

  /** Sends one statement (prepared when it has parameters) under its deadline, and collects its result. */
  private run(sql: string, params: readonly Param[], options: ExecuteOptions, prepared = params.length > 0, changesNothing = false, mayApply = false, textValues = false): Promise<ResultCollector> {
    const span = startRoundTrip(sql, this.roundTripTarget);
    const sent = this.lifecycle.run(options.timeoutMs, () => this.collect(sql, params, options, prepared, textValues), changesNothing, mayApply);
    return span === undefined ? sent : endWith(span, sent, (collected, ended) => ended.setAttribute("db.response.returned_rows", collected.rows.length));
  }

  /** Where this session's round trips go, for their spans. */
  private readonly roundTripTarget = (): RoundTripTarget => {
    const { host, port } = this.peer();
    return { system: this.settings.flavour, namespace: this.internals.config.database ?? "", address: host, port };
  };

  /**
   * Sends one statement and collects its result while it streams in, converted and size-bounded
   * (result-collector.ts). Not async: the collector settles the promise, and tells `statementSettled`.
   */
  private collect(sql: string, params: readonly Param[], options: ExecuteOptions, prepared: boolean, textValues: boolean): Promise<ResultCollector> {
    return new Promise<ResultCollector>((resolve, reject) => {
      this.failInFlight = reject;
      const collector = new ResultCollector(sql, options, textValues, this.shapes, this.noteServerStatus, resolve, reject, this.statementSettled);
      try {
        // Prepared: one statement only, enforced by the server.
        deliverEvents(prepared ? this.commands.execute(sql, encodeParams(params)) : this.commands.query(sql), collector);
      } catch (err) {
        // mysql2 refused the statement before sending it (a parameter it cannot bind).
        collector.onCommandError(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  /** MySQL's way to stop a statement: KILL QUERY from a side session; a late one is absorbed by a no-op. */
  private cancelStrategy(): CancelStrategy {
    return {
      name: "KILL QUERY",
      cancel: (graceMs) => {
        const peer = this.peer();
        return this.settings.killQuery(peer.host, peer.port, this.internals.threadId, graceMs).then(
          () => true,
          () => false,
        );
      },
      cut: () => this.destroy(),
      classify: (err, timedOut) => this.classifyFailure(err, timedOut),
      // The statement finished just as its timeout fired: the KILL QUERY sent for it may land on the
      // idle session and interrupt whatever runs next. Let a no-op take it.
      absorbLateCancel: (graceMs) =>
        this.run("DO 0", [], Object.assign({}, INTERNAL, { timeoutMs: graceMs })).then(
          () => true,
          (err: unknown) => err instanceof GatewayError && err.database?.engineCode !== undefined && INTERRUPTED.has(err.database.engineCode),
        ),
    };
  }

  /**
   * Interrupted (KILL QUERY, or the server's own time limit) after our deadline passed is a cancel;
   * other server errors leave the session alive; a client-side refusal before anything was sent (an
   * invalid parameter) too; anything else ends the session.
   */
  private classifyFailure(err: unknown, timedOut: boolean): StatementFailure {
    const alive = this.lifecycle.alive;
    if (isServerError(err) && alive) {
      if (INTERRUPTED.has(err.errno) && timedOut) return { kind: "cancelled", cause: err };
      return { kind: "refused", error: mapStatementError(err) };
    }
    const cause = err instanceof Error ? err : new Error(String(err));
    const driverError = cause as MysqlDriverError;
    if (driverError.fatal !== true && alive && !driverError.code?.startsWith("PROTOCOL_")) {
      return { kind: "refused", error: new GatewayError("INVALID_REQUEST", cause.message, { cause }) };
    }
    return { kind: "session lost", cause };
  }

  /** The instance this session is on: its socket's peer address, not a name that may have moved since. */
  private peer(): { host: string; port: number } {
    const stream = this.internals.stream;
    if (stream.remoteAddress && stream.remotePort) return { host: stream.remoteAddress, port: stream.remotePort };
    return { host: this.internals.config.host ?? "127.0.0.1", port: this.internals.config.port ?? 3306 };
  }
}
