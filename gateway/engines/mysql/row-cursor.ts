/**
 * One streamed MySQL statement: rows are converted as they arrive (the same converters as
 * MysqlConnection.execute) and kept until a batch of `fetchRows` is full; then the session's socket
 * is paused (mysql2's pause: no more packets are read, so the server blocks writing), and it is
 * resumed only when the caller takes the batch. Stopping early sends the engine's cancel (KILL QUERY)
 * and reads on, dropping rows, until the server reports the statement ended; the shared lifecycle
 * cuts the socket if it does not within the grace.
 */
import type { Connection } from "mysql2";
import type { Column } from "../../../schemas/query.js";
import { GatewayError } from "../../errors.js";
import type { RowCursor, StreamOptions, StreamSummary } from "../engine.js";
import type { StatementControl } from "../session-lifecycle.js";
import { type CommandReceiver, deliverEvents, type Mysql2Command } from "./command-events.js";
import { approximateBytes, columnsOf, type Converter, convertersFor, convertRow, type MysqlField } from "./values.js";

interface Header {
  affectedRows: number;
  serverStatus?: number;
}

interface Waiter {
  resolve(rows: unknown[][]): void;
  reject(err: Error): void;
}

export class MysqlRowCursor implements RowCursor, CommandReceiver {
  columns: Column[] = [];
  private converters: Converter[] = [];
  private pending: unknown[][] = [];
  private waiter: Waiter | undefined;
  private control: StatementControl | undefined;
  private paused = false;
  private sawFields = false;
  private ended = false;
  private stopping = false;
  private failure: Error | undefined;
  private rowsSeen = 0;
  private header: Header | undefined;
  /** Settles with the lifecycle's reading of how the statement ended (undefined: cleanly). */
  private outcome: Promise<GatewayError | undefined> = Promise.resolve(undefined);
  private first: unknown[][] | undefined;
  private endSeen = false;
  private resolveRun: (() => void) | undefined;
  private rejectRun: ((err: Error) => void) | undefined;

  constructor(
    private readonly connection: Connection,
    private readonly command: string,
    private readonly options: StreamOptions,
    /** Told the server's status flags of an OK packet (whether a transaction is open). */
    private readonly onStatus: (serverStatus: number) => void,
  ) {}

  get summary(): StreamSummary | undefined {
    if (!this.ended) return undefined;
    return { command: this.command, rowCount: this.sawFields ? this.rowsSeen : (this.header?.affectedRows ?? null) };
  }

  /**
   * Sends the statement (`send` returns mysql2's command) under the lifecycle's `run`, and resolves
   * once the first batch, or the end, is in: a failure before any row is thrown from here.
   */
  async start(run: (submit: (control: StatementControl) => Promise<void>) => Promise<void>, send: () => Mysql2Command): Promise<void> {
    const ran = run((control) => {
      this.control = control;
      return new Promise<void>((resolve, reject) => {
        this.resolveRun = resolve;
        this.rejectRun = reject;
        deliverEvents(send(), this);
      });
    });
    this.outcome = ran.then(
      () => undefined,
      (err: unknown) => (err instanceof GatewayError ? err : new GatewayError("INTERNAL_ERROR", "the stream failed", { cause: err })),
    );
    this.first = await this.next();
  }

  async next(): Promise<unknown[][]> {
    if (this.first !== undefined) {
      const rows = this.first;
      this.first = undefined;
      if (rows.length > 0 || this.ended) return rows;
    }
    if (this.ended) return [];
    if (this.failure) return this.failed();
    if (this.pending.length === 0 && !this.finished()) {
      const rows = await new Promise<unknown[][]>((resolve, reject) => {
        this.waiter = { resolve, reject };
        this.resume();
      }).catch(() => undefined);
      if (rows === undefined) return this.failed();
      if (rows.length > 0) return rows;
    }
    if (this.pending.length > 0) {
      const rows = this.pending;
      this.pending = [];
      this.resume();
      return rows;
    }
    const failure = await this.outcome;
    if (failure) throw failure;
    this.ended = true;
    return [];
  }

  async close(): Promise<void> {
    if (this.ended) return;
    if (!this.finished()) {
      this.stopping = true;
      this.pending = [];
      this.control?.cancel("because its caller went away");
      // The server may be blocked writing rows to the paused socket: read on so the KILL lands.
      this.resume();
    }
    await this.outcome;
  }

  /** The session died under the statement (mysql2 reports that on the connection, not the command). */
  abort(cause: Error): void {
    this.fail(cause);
    this.rejectRun?.(cause);
  }

  onCommandError(err: Error): void {
    this.fail(err);
    this.rejectRun?.(err);
  }

  onCommandEnd(): void {
    this.endSeen = true;
    this.deliver();
    this.resolveRun?.();
  }

  /** Whether the statement has already ended on the server (its outcome is only waited for). */
  private finished(): boolean {
    return this.failure !== undefined || this.endSeen;
  }

  onCommandFields(fields: MysqlField[] | undefined): void {
    if (!fields) return;
    this.sawFields = true;
    this.columns = columnsOf(fields);
    this.converters = convertersFor(fields, this.options.bigNumbers);
  }

  onCommandRow(row: unknown): void {
    if (!Array.isArray(row)) {
      const header = row as Header;
      this.header = header;
      if (header.serverStatus !== undefined) this.onStatus(header.serverStatus);
      return;
    }
    if (this.stopping || this.failure) return;
    convertRow(row, this.converters);
    const bytes = approximateBytes(row);
    if (bytes > this.options.maxRowBytes) {
      this.tooLarge(bytes);
      return;
    }
    this.rowsSeen++;
    this.pending.push(row);
    if (this.pending.length >= this.options.fetchRows) {
      this.pause();
      this.deliver();
    }
  }

  /** A row past limits.maxResultBytes: the caller hears it now; the statement is stopped like an abandoned one. */
  private tooLarge(bytes: number): void {
    this.fail(new GatewayError("RESULT_TOO_LARGE", `a row of about ${bytes} bytes exceeds limits.maxResultBytes (${this.options.maxRowBytes}); a stream still refuses a single row larger than that`));
    this.stopping = true;
    this.control?.cancel("because a row exceeded limits.maxResultBytes");
    this.resume();
  }

  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.control?.waitingForCaller();
    this.connection.pause();
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.control?.waitingForDatabase();
    this.connection.resume();
  }

  private deliver(): void {
    const waiter = this.waiter;
    if (!waiter) return;
    this.waiter = undefined;
    const rows = this.pending;
    this.pending = [];
    waiter.resolve(rows);
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.pending = [];
    this.waiter?.reject(err);
    this.waiter = undefined;
  }

  /** The gateway's own refusal as it is; a failure on the server as the lifecycle read it. */
  private async failed(): Promise<never> {
    const failure = this.failure;
    const read = await this.outcome;
    throw failure instanceof GatewayError ? failure : (read ?? failure ?? new GatewayError("INTERNAL_ERROR", "the stream failed without a cause"));
  }
}
