/**
 * One statement as a `pg` Submittable: our own lean replacement for pg.Query on the hot path.
 * It writes the extended-protocol messages itself so that a cached prepared statement whose row
 * description is already known is executed with Bind/Execute/Sync only (no Parse, no Describe),
 * parses rows with the field parsers cached for that statement, and enforces the result-size bounds
 * while rows stream in (rows past a bound are dropped, not kept).
 */
import type { Column } from "../../../schemas/query.js";
import { ResultBudget, type ResultLimits } from "../result-budget.js";
import type { Parser } from "./values.js";

/** The part of pg's Connection this module drives. */
export interface WireConnection {
  stream: { cork?: () => void; uncork?: () => void; write(buffer: Uint8Array): boolean };
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  parse(message: { text: string; name?: string; types?: number[] }): void;
  bind(message: { portal: string; statement: string; values: unknown[]; binary: boolean }): void;
  describe(message: { type: "P" | "S"; name: string }): void;
  execute(message: { portal: string; rows: number }): void;
  flush(): void;
  sync(): void;
  query(text: string): void;
  sendCopyFail(message: string): void;
}

export interface FieldDescription {
  name: string;
  dataTypeID: number;
  /** The type modifier from the row description: numeric(p,s), varchar(n)... (-1 when none). */
  dataTypeModifier?: number;
  /** The rest of the row description, as pg-protocol reads it. */
  dataTypeSize?: number;
  tableID?: number;
  columnID?: number;
}

/** What is known about a prepared statement on one connection. */
export interface PreparedStatement {
  readonly name: string;
  /** Filled from the first execution's RowDescription; later executions skip Describe. */
  fields: FieldDescription[] | undefined;
  columns: Column[] | undefined;
  parsers: Map<string, Parser[]>;
}

type Done = (err: Error | null, query: StatementQuery) => void;

const COMMAND_TAG = /^([A-Za-z ]+?)(?: \d+)?(?: (\d+))?$/;

export class StatementQuery {
  /** Read by pg to track parsed statements and for error clean-up. */
  readonly name: string | undefined;
  fields: FieldDescription[] = [];
  rows: unknown[][] = [];
  command = "";
  rowCount: number | null = null;
  /** Rows and bytes seen against the bounds; bytes are the values' text as the server sent it. */
  readonly budget: ResultBudget;
  private parsers: Parser[] = [];
  protected rowError: Error | null = null;
  private finished = false;

  constructor(
    readonly text: string,
    protected readonly values: unknown[] | undefined,
    protected readonly prepared: PreparedStatement | undefined,
    private readonly parsersFor: (fields: FieldDescription[]) => Parser[],
    private readonly parserKey: string,
    limits: ResultLimits,
    public callback: Done,
  ) {
    this.budget = new ResultBudget(limits);
    this.name = prepared?.name;
    if (prepared?.fields) {
      this.fields = prepared.fields;
      this.parsers = this.cachedParsers(prepared, prepared.fields);
    }
  }

  submit(connection: WireConnection): null {
    if (this.values === undefined) {
      connection.query(this.text);
      return null;
    }
    const parsed = this.parsedOn(connection);
    connection.stream.cork?.();
    try {
      if (!parsed) this.sendParse(connection);
      this.sendExecute(connection, parsed);
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  /** Whether this session has the statement parsed already (then Parse, and Describe once its fields are known, are skipped). */
  protected parsedOn(connection: WireConnection): boolean {
    return this.name !== undefined && connection.parsedStatements[this.name] !== undefined;
  }

  protected sendParse(connection: WireConnection): void {
    connection.parse({ text: this.text, name: this.name ?? "" });
    if (this.name !== undefined) connection.submittedNamedStatements[this.name] = this.text;
  }

  /** Bind, Describe (unless the fields are known) and Execute: the statement, without its Sync. */
  protected sendExecute(connection: WireConnection, parsed: boolean): void {
    connection.bind({ portal: "", statement: this.name ?? "", values: this.values ?? [], binary: false });
    if (!parsed || this.prepared?.fields === undefined) connection.describe({ type: "P", name: "" });
    connection.execute({ portal: "", rows: 0 });
  }

  handleRowDescription(message: { fields: FieldDescription[] }): void {
    // A multi-statement simple query describes each result; the last one is kept.
    this.fields = message.fields;
    this.rows = [];
    if (this.prepared) {
      this.prepared.fields = message.fields;
      this.parsers = this.cachedParsers(this.prepared, message.fields);
    } else {
      this.parsers = this.parsersFor(message.fields);
    }
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    if (this.rowError || !this.budget.nextRow()) return;
    if (!this.budget.keep(rowTextBytes(message.fields))) {
      this.rows = [];
      return;
    }
    try {
      this.rows.push(parseRow(message.fields, this.parsers));
    } catch (err) {
      this.rowError = err as Error;
    }
  }

  handleCommandComplete(message: { text: string }): void {
    const match = COMMAND_TAG.exec(message.text);
    this.command = match?.[1] ?? message.text;
    const count = match?.[2] ?? /(\d+)$/.exec(message.text)?.[1];
    this.rowCount = count === undefined ? null : Number(count);
  }

  handleEmptyQuery(): void {}

  handlePortalSuspended(): void {}

  handleCopyInResponse(connection: WireConnection): void {
    connection.sendCopyFail("COPY FROM STDIN is not supported through the gateway");
    // In the extended protocol the server ignored our Sync while it was copying in: after CopyFail it
    // waits for another before ReadyForQuery, and without it the session would hang.
    if (this.values !== undefined) connection.sync();
  }

  handleCopyData(): void {}

  handleError(err: Error): void {
    this.finish(err);
  }

  handleReadyForQuery(): void {
    this.finish(this.rowError);
  }

  protected finish(err: Error | null): void {
    if (this.finished) return;
    this.finished = true;
    this.callback(err, this);
  }

  private cachedParsers(prepared: PreparedStatement, fields: FieldDescription[]): Parser[] {
    return cachedParsers(prepared, fields, this.parserKey, this.parsersFor);
  }
}

/** A row's size as the result bounds count it: its values' text as the server sent it. */
export function rowTextBytes(fields: readonly (string | null)[]): number {
  let bytes = 0;
  for (const field of fields) if (field !== null) bytes += field.length;
  return bytes;
}

/** A data row's values through the result's parsers (null stays null). */
export function parseRow(fields: readonly (string | null)[], parsers: readonly Parser[]): unknown[] {
  const row = new Array<unknown>(fields.length);
  for (let i = 0; i < fields.length; i++) {
    const text = fields[i];
    row[i] = text === null || text === undefined ? null : (parsers[i] as Parser)(text);
  }
  return row;
}

/** The parsers cached on a prepared statement for one bigNumbers mode, made on first use. */
export function cachedParsers(
  prepared: PreparedStatement,
  fields: FieldDescription[],
  parserKey: string,
  parsersFor: (fields: FieldDescription[]) => Parser[],
): Parser[] {
  let parsers = prepared.parsers.get(parserKey);
  if (!parsers) {
    parsers = parsersFor(fields);
    prepared.parsers.set(parserKey, parsers);
  }
  return parsers;
}
