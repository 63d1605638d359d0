/**
 * The seam between the database-agnostic core (pool, executor, transactions, HTTP) and a database
 * engine. Everything dialect-specific — placeholders, value conversion, error mapping, session reset,
 * role checks — lives behind these two interfaces.
 */
import type { Column, Isolation, Param } from "../../schemas/query.js";
import type { DatabaseCredentials } from "../credentials/database-credentials.js";
import type { DataApiDialect } from "./data-api-dialect.js";
import type { EngineStatement, StatementMode } from "./engine-statement.js";
import type { IdempotencySql } from "./idempotency-sql.js";
import type { SqlReader } from "./sql-analysis.js";
import type { StatementResult } from "./statement-result.js";

export type { ColumnDetail, StatementResult } from "./statement-result.js";
export type { EngineStatement, StatementMode } from "./engine-statement.js";

/** A statement's limits and timeout; how it runs is its mode (EngineStatement.mode). */
export interface ExecuteOptions {
  /** The statement is cancelled on the server after this long. */
  timeoutMs: number;
  /** int8/numeric as strings (exact) or numbers (ignored under StatementMode.textValues). */
  bigNumbers: "string" | "number";
  maxResultBytes: number;
  maxResultRows: number;
}

/** How one streamed statement runs (see RowCursor). */
export interface StreamOptions {
  /**
   * How long the database may take to answer each request for rows (the first rows included); the
   * clock stops while the gateway waits for its caller. Past it: the engine's cancel, grace, cut.
   */
  timeoutMs: number;
  bigNumbers: "string" | "number";
  /** Rows asked for at a time: what the gateway holds of a stream at most. */
  fetchRows: number;
  /** A single row larger than this (counted as for ExecuteOptions.maxResultBytes) ends the stream with RESULT_TOO_LARGE. */
  maxRowBytes: number;
}

/** How a streamed statement ended. */
export interface StreamSummary {
  command: string;
  rowCount: number | null;
}

/**
 * A result read as it arrives, one batch at a time: the database is asked for more only when the
 * caller takes a batch, so the caller's pace sets the database's and memory stays at one batch
 * whatever the result's size. Values are converted exactly as `execute` converts them.
 */
export interface RowCursor {
  readonly columns: Column[];
  /**
   * The next rows (at most StreamOptions.fetchRows); an empty array once the result has ended (then
   * `summary` is set). Throws the mapped GatewayError when the statement fails.
   */
  next(): Promise<unknown[][]>;
  /** Set once the result ended cleanly. */
  readonly summary: StreamSummary | undefined;
  /**
   * Ends the statement early (the engine's cancel on the server when it is still producing rows) and
   * leaves the session fit for the next caller, or cut when it could not be ended cleanly. Resolves
   * once the session is either; never rejects. A no-op after the result ended.
   */
  close(): Promise<void>;
}

/** What a session really reached: the role-truth check of a new connection and of the monitor. */
export interface InstanceState {
  role: "primary" | "replica";
  /** WAL position: written on a primary, replayed on a replica (null where the engine has none). */
  position: string | null;
  /** On a replica: how old the last replayed transaction is (null on a primary or when unknown). */
  replayAgeMs: number | null;
  /** The instance's own identifier where the database tells it (Aurora's server id), whatever name was dialled. */
  serverId?: string | undefined;
  /** On a writer that reports its readers' progress (Aurora): each reader's position by server id. */
  readerPositions?: ReadonlyMap<string, string> | undefined;
  /** The engine's own position functions were refused here (Aurora): what the server said, for logs and the status page. */
  positionsRefused?: PositionsRefusal | undefined;
}

/** A refused replication function: SQLSTATE and the server's message. */
export interface PositionsRefusal {
  sqlstate: string;
  message: string;
}

/** One instance of the cluster as the database itself lists it (Aurora's aurora_replica_status()). */
export interface ListedInstance {
  serverId: string;
  writer: boolean;
  lagMs: number | null;
}

export interface TransactionOptions {
  isolation?: Isolation | undefined;
  readOnly?: boolean | undefined;
  /** DEFERRABLE (PostgreSQL; it matters for SERIALIZABLE READ ONLY transactions only). */
  deferrable?: boolean | undefined;
  /**
   * For read-only principals: the session's default access mode becomes READ ONLY too (MySQL), so a
   * statement that commits implicitly cannot start a read-write transaction of its own; the session is
   * reset before it is reused.
   */
  lockReadOnly?: boolean | undefined;
}

/** One live database session. Not safe for concurrent use: the pool hands it to one caller at a time. */
export interface EngineConnection {
  readonly id: number;
  /** The role this session found when it was opened (set by the role check), if checked. */
  reachedRole: "primary" | "replica" | undefined;
  /** The instance this session reached, as it names itself (Aurora's server id), whatever name was dialled; set by the role check. */
  reachedServerId: string | undefined;
  /**
   * Runs one statement. Throws GatewayError: DATABASE_ERROR, SERIALIZATION_FAILURE, STATEMENT_TIMEOUT,
   * RESULT_TOO_LARGE, or OUTCOME_UNKNOWN when the session died after the statement was sent.
   */
  execute(statement: EngineStatement, options: ExecuteOptions): Promise<StatementResult>;
  /**
   * Starts one statement as a stream and resolves once its columns and first rows (or its end) are
   * known, so that a failure before any row is an ordinary error. Until the cursor is closed or ends,
   * the session runs nothing else.
   */
  stream(statement: EngineStatement, options: StreamOptions): Promise<RowCursor>;
  begin(options: TransactionOptions, timeoutMs: number): Promise<void>;
  /** Resolves "committed", or "rolled back" when the database refused (the transaction had failed). */
  commit(timeoutMs: number): Promise<"committed" | "rolled back">;
  /**
   * COMMIT, and the position after it for a consistency token, in as few round trips as the engine
   * can (PostgreSQL: one). `position` is null when it was not read (rolled back) or could not be (the
   * commit stands either way).
   */
  commitWithPosition(timeoutMs: number): Promise<{ ended: "committed" | "rolled back"; position: string | null }>;
  rollback(timeoutMs: number): Promise<void>;
  /** Role and replication position of the instance this session reached. */
  inspect(timeoutMs: number): Promise<InstanceState>;
  /** The cluster's instances as the database lists them (Aurora PostgreSQL and MySQL only; fails elsewhere). */
  listInstances(timeoutMs: number): Promise<ListedInstance[]>;
  /** A consistency token for what this session has committed so far (the primary's WAL position). */
  commitPosition(timeoutMs: number): Promise<string | null>;
  /** A cheap round trip proving the session is alive. */
  ping(timeoutMs: number): Promise<void>;
  /** Whether the session is inside a transaction block, as the server last reported it. */
  readonly inTransaction: boolean;
  /**
   * True when a statement may have left session state (SET, temp table, lock, open transaction...):
   * every statement not known to leave none counts.
   */
  readonly needsReset: boolean;
  /**
   * Undoes what `needsReset` reports, for the next caller of the same principal. Resolves true when
   * that took the full reset (the session is as just connected), false when a rollback was enough.
   */
  reset(timeoutMs: number): Promise<boolean>;
  /**
   * Returns the session to its just-connected state whatever it holds, for a caller of another
   * principal: PostgreSQL DISCARD ALL (settings, role, temporary objects, advisory locks, LISTEN,
   * cursors, sequence state, prepared statements); MySQL COM_RESET_CONNECTION (variables, warnings,
   * temporary tables, locks, prepared statements), the role and the session settings again.
   */
  resetFully(timeoutMs: number): Promise<void>;
  /** False once the session died or was closed. */
  readonly alive: boolean;
  /** Called once when the session dies on its own (server shutdown, network). */
  onDeath(listener: (cause: Error) => void): void;
  /** Polite close (Terminate message). */
  close(): Promise<void>;
  /** Immediate close: destroy the socket. */
  destroy(): void;
}

export interface EngineEndpoint {
  /** Connection URL (carries credentials: never log it unredacted). */
  url: string;
  /** Who the session says it is to the server (PostgreSQL application_name); default "poolgate". */
  purpose?: "pool" | "monitor";
  /** The login to open the session with; default: the cluster's read-write login. */
  credentials?: DatabaseCredentials | undefined;
}

export interface Engine {
  readonly kind: "postgres" | "mysql";
  /** Answers every question the gateway asks about a SQL text, in this engine's dialect. */
  readonly reader: SqlReader;
  /**
   * A statement for work the planner does not plan (the idempotency record, tests): `sql` read once by
   * the reader (cached per text), in `mode` (default: autocommit, as written).
   */
  statement(sql: string, params?: readonly Param[], mode?: StatementMode): EngineStatement;
  /** How the RDS Data API surface binds parameters and writes results on this engine. */
  readonly dataApi: DataApiDialect;
  /** The SQL of the idempotency record (exactly-once writes) in this engine's dialect. */
  readonly idempotency: IdempotencySql;
  /**
   * Compares two positions from InstanceState/commitPosition: >= 0 when an instance at `a` has applied
   * everything up to `b` (0 when they are the same), negative otherwise. WAL positions are totally
   * ordered; GTID sets may be incomparable, which counts as "not applied".
   */
  comparePositions(a: string, b: string): number;
  /** Whether a caller-supplied consistency token has the form of a position. */
  isPosition(text: string): boolean;
  connect(endpoint: EngineEndpoint, connectTimeoutMs: number): Promise<EngineConnection>;
  /** Maps a failure to open a session into DATABASE_UNAVAILABLE with a safe message. */
  describeConnectError(err: unknown): string;
}
