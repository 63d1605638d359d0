/**
 * What a statement's result columns mean to the gateway — the wire columns and a converter per column —
 * worked out once per statement text and kept while the server describes the result the same way.
 * mysql2 hands out new field objects on every execution; building the columns and converters again for
 * each (and a new column list, which the HTTP layer would serialise again) is work a repeated statement
 * need not redo. A changed description (ALTER TABLE, another sql_mode) simply replaces the entry.
 */
import type { Column } from "../../../schemas/query.js";
import { columnsOf, type Converter, convertersFor, type MysqlField, textConvertersFor } from "./values.js";

/** How values come back: big numbers as strings or numbers, or every value as the server printed it (StatementMode.textValues). */
export type ValueMode = "string" | "number" | "text";

export interface ResultShape {
  columns: Column[];
  converters: Converter[];
}

interface Entry {
  fields: readonly MysqlField[];
  columns: Column[];
  /** The shape with big numbers as strings, and as numbers: made when first asked for, then handed out as they are. */
  bigNumbersAsStrings: ResultShape | undefined;
  bigNumbersAsNumbers: ResultShape | undefined;
  asText: ResultShape | undefined;
}

/** Whether two descriptions give the same columns and converters (everything columnsOf and convertersFor read). */
function describeAlike(a: readonly MysqlField[], b: readonly MysqlField[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as MysqlField;
    const y = b[i] as MysqlField;
    if (
      x.name !== y.name ||
      x.columnType !== y.columnType ||
      x.flags !== y.flags ||
      x.characterSet !== y.characterSet ||
      x.columnLength !== y.columnLength ||
      x.decimals !== y.decimals ||
      x.extendedTypeName !== y.extendedTypeName ||
      x.extendedFormat !== y.extendedFormat
    ) {
      return false;
    }
  }
  return true;
}

export class ResultShapes {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly capacity: number) {}

  /** The columns and converters for `fields`, the description the server gave of `sql`'s result. */
  of(sql: string, fields: readonly MysqlField[], mode: ValueMode): ResultShape {
    let entry = this.entries.get(sql);
    if (entry === undefined || !describeAlike(entry.fields, fields)) {
      entry = { fields, columns: columnsOf(fields), bigNumbersAsStrings: undefined, bigNumbersAsNumbers: undefined, asText: undefined };
      if (this.entries.size >= this.capacity) {
        const oldest = this.entries.keys().next().value;
        if (oldest !== undefined) this.entries.delete(oldest);
      }
      this.entries.delete(sql);
      if (this.capacity > 0) this.entries.set(sql, entry);
    }
    if (mode === "text") return (entry.asText ??= { columns: entry.columns, converters: textConvertersFor(fields) });
    if (mode === "string") return (entry.bigNumbersAsStrings ??= { columns: entry.columns, converters: convertersFor(fields, "string") });
    return (entry.bigNumbersAsNumbers ??= { columns: entry.columns, converters: convertersFor(fields, "number") });
  }

  clear(): void {
    this.entries.clear();
  }
}
