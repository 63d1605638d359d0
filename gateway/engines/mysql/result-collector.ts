/**
 * One buffered statement's outcome as it streams in from mysql2 (command-events.ts delivers the
 * command's events here): the columns and converters of each result set (kept per statement text:
 * result-shapes.ts), rows converted and bounded by the statement's result budget as they arrive, the
 * OK packet of a statement without rows, and the last result set of a CALL, whose final OK packet
 * carries none. Settles the statement's promise on the command's end or error.
 */
import type { Column } from "../../../schemas/query.js";
import type { ExecuteOptions } from "../engine.js";
import { ResultBudget } from "../result-budget.js";
import type { CommandReceiver } from "./command-events.js";
import type { ResultShapes } from "./result-shapes.js";
import { approximateBytes, type Converter, convertRow, type MysqlField } from "./values.js";

/** The OK packet mysql2 reports for statements without a result set. */
export interface ResultSetHeader {
  affectedRows: number;
  insertId: number | string;
  serverStatus?: number;
}

export class ResultCollector implements CommandReceiver {
  fields: MysqlField[] | undefined = undefined;
  /** The wire columns of `fields` (shared by executions of the statement that describe it alike). */
  columns: Column[] = [];
  converters: Converter[] = [];
  rows: unknown[][] = [];
  header: ResultSetHeader | undefined = undefined;
  /** The last result set (with columns), for CALL, whose final OK packet carries no rows. */
  lastResultSet: { fields: MysqlField[]; columns: Column[]; rows: unknown[][] } | undefined = undefined;
  /** Rows and bytes seen against the bounds; bytes are the converted values' approximate JSON size. */
  readonly budget: ResultBudget;

  constructor(
    private readonly sql: string,
    private readonly options: ExecuteOptions,
    /** Every value as the server printed it (StatementMode.textValues). */
    private readonly textValues: boolean,
    private readonly shapes: ResultShapes,
    /** Told the server's status flags of each OK packet (whether a transaction is open). */
    private readonly onStatus: (serverStatus: number) => void,
    private readonly resolve: (collected: ResultCollector) => void,
    private readonly reject: (err: Error) => void,
    /** Told once the promise settled, with its reject (the connection lets go of it). */
    private readonly onSettled: (reject: (err: Error) => void) => void,
  ) {
    this.budget = new ResultBudget({ maxRows: options.maxResultRows, maxBytes: options.maxResultBytes });
  }

  onCommandFields(fields: MysqlField[] | undefined): void {
    this.fields = fields;
    this.rows = [];
    this.header = undefined;
    if (fields) {
      const shape = this.shapes.of(this.sql, fields, this.textValues ? "text" : this.options.bigNumbers);
      this.columns = shape.columns;
      this.converters = shape.converters;
      this.lastResultSet = { fields, columns: this.columns, rows: this.rows };
    } else {
      this.columns = [];
      this.converters = [];
    }
  }

  onCommandRow(row: unknown): void {
    if (!Array.isArray(row)) {
      const header = row as ResultSetHeader;
      this.header = header;
      this.fields = undefined;
      if (header.serverStatus !== undefined) this.onStatus(header.serverStatus);
      return;
    }
    if (!this.budget.nextRow()) return;
    convertRow(row, this.converters);
    if (!this.budget.keep(approximateBytes(row))) {
      this.rows.length = 0;
      return;
    }
    this.rows.push(row);
  }

  /** A promise settles once: an end after an error, or anything after the session died under the statement, does nothing. */
  onCommandError(err: Error): void {
    this.onSettled(this.reject);
    this.reject(err);
  }

  onCommandEnd(): void {
    this.onSettled(this.reject);
    this.resolve(this);
  }
}
