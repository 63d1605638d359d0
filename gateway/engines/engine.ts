/**
 * The seam between the database-agnostic core (pool, executor, transactions, HTTP) and a database
 * engine. Everything dialect-specific — placeholders, value conversion, error mapping, session reset,
 * role checks — lives behind these two interfaces.
 */
import type { Column, Isolation, Param } from "../../schemas/query.js";

export interface StatementResult {
  command: string;
  columns: Column[];
  /** Rows in column order; the HTTP layer shapes them into objects when asked. */
  rows: unknown[][];
  rowCount: number | null;
}

export interface ExecuteOptions {
  /** The statement is cancelled on the server after this long. */
  timeoutMs: number;
  /** int8/numeric as strings (exact) or numbers. */
  bigNumbers: "string" | "number";
  maxResultBytes: number;
  maxResultRows: number;
}

export interface TransactionOptions {
  isolation?: Isolation | undefined;
  readOnly?: boolean | undefined;
}

/** One live database session. Not safe for concurrent use: the pool hands it to one caller at a time. */
export interface EngineConnection {
  readonly id: number;
  /**
   * Runs one statement. Throws GatewayError: DATABASE_ERROR, SERIALIZATION_FAILURE, STATEMENT_TIMEOUT,
   * RESULT_TOO_LARGE, or OUTCOME_UNKNOWN when the session died after the statement was sent.
   */
  execute(sql: string, params: readonly Param[], options: ExecuteOptions): Promise<StatementResult>;
  begin(options: TransactionOptions, timeoutMs: number): Promise<void>;
  /** Resolves "committed", or "rolled back" when the database refused (the transaction had failed). */
  commit(timeoutMs: number): Promise<"committed" | "rolled back">;
  rollback(timeoutMs: number): Promise<void>;
  /** A cheap round trip proving the session is alive. */
  ping(timeoutMs: number): Promise<void>;
  /** True when a statement may have left session state (SET, temp table, lock, open transaction...). */
  readonly needsReset: boolean;
  /** Returns the session to its just-connected state. */
  reset(timeoutMs: number): Promise<void>;
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
}

export interface Engine {
  readonly kind: "postgres";
  connect(endpoint: EngineEndpoint, connectTimeoutMs: number): Promise<EngineConnection>;
  /** Maps a failure to open a session into DATABASE_UNAVAILABLE with a safe message. */
  describeConnectError(err: unknown): string;
}
