/**
 * One streamed statement as a `pg` Submittable: the extended protocol's row limit, so the server
 * sends at most `fetchRows` rows per Execute and suspends the portal until the gateway asks again
 * (Execute + Flush, no Sync in between: a Sync would end the implicit transaction and drop the
 * portal). The gateway asks again only when its caller took the last batch, which is the whole of
 * the backpressure: nothing is read ahead. Rows are parsed with the statement's cached parsers, as
 * StatementQuery parses them. After CommandComplete, an error or an early end, one Sync closes the
 * portal and ends the implicit transaction; the query settles at the ReadyForQuery that answers it
 * (or at the error: pg hands the ReadyForQuery after an error to nobody).
 */
import { GatewayError } from "../../errors.js";
import type { StatementControl } from "../session-lifecycle.js";
import { cachedParsers, type FieldDescription, parseRow, type PreparedStatement, rowTextBytes, type WireConnection } from "./statement-query.js";
import type { Parser } from "./values.js";

const COMMAND_TAG = /^([A-Za-z ]+?)(?: \d+)?(?: (\d+))?$/;

type PortalState = "fetching" | "suspended" | "complete" | "failed";

interface BatchWaiter {
  resolve(rows: unknown[][]): void;
  reject(err: Error): void;
}

export interface PortalSettings {
  fetchRows: number;
  maxRowBytes: number;
  parserKey: string;
  parsersFor: (fields: FieldDescription[]) => Parser[];
}

export class PortalQuery {
  /** Read by pg to track parsed statements and for error clean-up. */
  readonly name: string | undefined;
  command = "";
  rowCount: number | null = null;
  /** Set by the lifecycle once the statement runs under its deadline. */
  control: StatementControl | undefined;
  /** Settles when the statement has ended: at the ReadyForQuery after its Sync, or at its error. */
  readonly done: Promise<void>;
  private state: PortalState = "fetching";
  private batch: unknown[][] = [];
  private parsers: Parser[];
  private connection: WireConnection | undefined;
  private waiter: BatchWaiter | undefined;
  private synced = false;
  private rowsSent = 0;
  private stopping = false;
  private failure: Error | undefined;
  private settle!: (err: Error | null) => void;

  constructor(
    readonly text: string,
    private readonly values: unknown[],
    private readonly prepared: PreparedStatement,
    /** The statement's fields, known before the portal opens (a Describe of the statement). */
    readonly fields: FieldDescription[],
    private readonly settings: PortalSettings,
  ) {
    this.name = prepared.name === "" ? undefined : prepared.name;
    this.parsers = cachedParsers(prepared, fields, settings.parserKey, settings.parsersFor);
    this.done = new Promise<void>((resolve, reject) => {
      this.settle = (err) => (err ? reject(err) : resolve());
    });
  }

  /** Whether the result has ended cleanly (CommandComplete seen). */
  get complete(): boolean {
    return this.state === "complete";
  }

  submit(connection: WireConnection): null {
    this.connection = connection;
    const parsed = this.name === undefined || connection.parsedStatements[this.name] !== undefined;
    connection.stream.cork?.();
    try {
      if (!parsed) {
        connection.parse({ text: this.text, name: this.prepared.name });
        if (this.name !== undefined) connection.submittedNamedStatements[this.name] = this.text;
      }
      connection.bind({ portal: "", statement: this.prepared.name, values: this.values, binary: false });
      connection.execute({ portal: "", rows: this.settings.fetchRows });
      connection.flush();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  /** The next batch: the one already read, or (once it was taken) the next Execute's. */
  fetch(): Promise<unknown[][]> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.batch.length > 0 || this.state === "complete") return Promise.resolve(this.take());
    if (this.state === "suspended") {
      this.state = "fetching";
      this.control?.waitingForDatabase();
      this.connection?.execute({ portal: "", rows: this.settings.fetchRows });
      this.connection?.flush();
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /**
   * Ends the statement before its end: a suspended portal is closed by a Sync (bounded by the
   * deadline again); one still producing rows is cancelled on the server first.
   */
  stop(reason: string): void {
    this.stopping = true;
    if (this.state === "suspended" && !this.synced) {
      this.control?.waitingForDatabase();
      this.sync();
    } else if (this.state === "fetching") {
      this.control?.cancel(reason);
    }
  }

  handleRowDescription(): void {
    // Known before the portal opened (the statement was described): the parsers are already set.
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    if (this.failure) return;
    const bytes = rowTextBytes(message.fields);
    if (bytes > this.settings.maxRowBytes) {
      this.fail(new GatewayError("RESULT_TOO_LARGE", `a row of ${bytes} bytes exceeds limits.maxResultBytes (${this.settings.maxRowBytes}); a stream still refuses a single row larger than that`));
      return;
    }
    try {
      this.batch.push(parseRow(message.fields, this.parsers));
      this.rowsSent++;
    } catch (err) {
      this.fail(err as Error);
    }
  }

  handlePortalSuspended(): void {
    if (this.failure || this.stopping) {
      this.sync();
      return;
    }
    this.state = "suspended";
    this.control?.waitingForCaller();
    this.deliver();
  }

  handleCommandComplete(message: { text: string }): void {
    const match = COMMAND_TAG.exec(message.text);
    this.command = match?.[1] ?? message.text;
    const count = match?.[2] ?? /(\d+)$/.exec(message.text)?.[1];
    // The tag counts only the last Execute's rows: a result read in batches counts them all.
    this.rowCount = this.fields.length > 0 ? this.rowsSent : count === undefined ? null : Number(count);
    if (!this.failure) this.state = "complete";
    this.sync();
  }

  handleEmptyQuery(): void {
    this.state = "complete";
    this.sync();
  }

  handleCopyInResponse(connection: WireConnection): void {
    connection.sendCopyFail("COPY FROM STDIN is not supported through the gateway");
    this.sync();
  }

  handleCopyData(): void {}

  /** The server's error (or the session's end): the statement failed, as the lifecycle will read it. */
  handleError(err: Error): void {
    // The server skips everything up to the next Sync after an error.
    this.sync();
    this.fail(err);
    this.settle(err);
  }

  /**
   * The statement ended and the session is ready again. A failure of the gateway's own (a row too
   * large, a value it could not parse) was already handed to the caller; for the session it is a
   * clean end.
   */
  handleReadyForQuery(): void {
    if (!this.failure) this.deliver();
    this.settle(null);
  }

  private sync(): void {
    if (this.synced) return;
    this.synced = true;
    this.connection?.sync();
  }

  /** The first failure of the statement: the caller waiting for rows hears it (now or at its next fetch); later rows are dropped. */
  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.state = "failed";
    this.batch = [];
    this.waiter?.reject(err);
    this.waiter = undefined;
  }

  private deliver(): void {
    const waiter = this.waiter;
    if (!waiter) return;
    this.waiter = undefined;
    waiter.resolve(this.take());
  }

  private take(): unknown[][] {
    const rows = this.batch;
    this.batch = [];
    return rows;
  }
}

/**
 * Parse (when the statement is new on the session) and Describe of a statement, then Sync: its
 * result's fields before a portal is opened on it, so a stream's columns (and the names of types
 * not built in) are known before its first row.
 */
export class DescribeQuery {
  readonly name: string | undefined;
  fields: FieldDescription[] = [];
  private finished = false;

  constructor(
    readonly text: string,
    private readonly prepared: PreparedStatement,
    private readonly callback: (err: Error | null, query: DescribeQuery) => void,
  ) {
    this.name = prepared.name === "" ? undefined : prepared.name;
  }

  submit(connection: WireConnection): null {
    const parsed = this.name !== undefined && connection.parsedStatements[this.name] !== undefined;
    connection.stream.cork?.();
    try {
      if (!parsed) {
        connection.parse({ text: this.text, name: this.prepared.name });
        if (this.name !== undefined) connection.submittedNamedStatements[this.name] = this.text;
      }
      connection.describe({ type: "S", name: this.prepared.name });
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(message: { fields: FieldDescription[] }): void {
    this.fields = message.fields;
  }

  handleDataRow(): void {}
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyData(): void {}

  handleError(err: Error): void {
    this.finish(err);
  }

  handleReadyForQuery(): void {
    this.finish(null);
  }

  private finish(err: Error | null): void {
    if (this.finished) return;
    this.finished = true;
    this.callback(err, this);
  }
}
