/**
 * Engine results -> the Data API's result shapes, written as JSON text directly so that 64-bit
 * integers keep every digit: `records` (rows of one-member Field unions), `columnMetadata` (all 14
 * members), and `formattedRecords` (formatRecordsAs JSON). Values arrive in the gateway's own JSON
 * conventions (int8/numeric/BIGINT/DECIMAL as exact strings, timestamps ISO-8601, bytes base64, JSON
 * as the database's text) and leave in the service's: timestamps "YYYY-MM-DD HH:MM:SS[.fff]" in UTC
 * without an offset, JSON compacted (the whitespace between tokens dropped, as the service's v2
 * re-serialises it, with every digit kept), MySQL TINYINT(1) and BIT(1) as booleans.
 */
import type { DataApiColumnMetadata } from "../../schemas/data-api.js";
import type { Column } from "../../schemas/query.js";
import type { ColumnDetail, StatementResult } from "../engines/engine.js";
import { compactJson, JsonText } from "../engines/json-text.js";

export interface ResultOptions {
  decimalReturnType?: "STRING" | "DOUBLE_OR_LONG" | undefined;
  longReturnType?: "STRING" | "LONG" | undefined;
}

type Engine = "postgres" | "mysql";

/** How a column's values are written: the Field member, or the JSON value for formattedRecords. */
type Kind = "boolean" | "long" | "double" | "decimal" | "string" | "blob" | "timestamp" | "json" | "bits" | "array" | "null";

interface ColumnPlan {
  kind: Kind;
  /** For arrays: the kind of the elements. */
  element?: Kind;
}

const json = JSON.stringify;

/** A value's text: strings as they are, database JSON compacted, objects as JSON, numbers and booleans printed. */
function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value instanceof JsonText) return compactJson(value.text);
  if (typeof value === "object" && value !== null) return json(value);
  return String(value);
}

/** Arrays for formattedRecords: database JSON elements become their compact text. */
function plainArray(values: unknown[]): unknown[] {
  return values.map((value) => (value instanceof JsonText ? compactJson(value.text) : Array.isArray(value) ? plainArray(value) : value));
}

/** "2024-01-15T03:34:56.123Z" or "2024-01-15T03:34:56" -> "2024-01-15 03:34:56.123" / "2024-01-15 03:34:56". */
function dataApiTimestamp(value: unknown): string {
  const text = textOf(value);
  if (text.charCodeAt(10) !== 84 /* T */) return text;
  const end = text.endsWith("Z") ? text.length - 1 : text.length;
  return `${text.slice(0, 10)} ${text.slice(11, end)}`;
}

function postgresKind(type: string): Kind {
  switch (type) {
    case "bool":
      return "boolean";
    case "int2":
    case "int4":
    case "int8":
    case "oid":
      return "long";
    case "float4":
    case "float8":
      return "double";
    case "numeric":
      return "decimal";
    case "bytea":
      return "blob";
    case "timestamp":
    case "timestamptz":
      return "timestamp";
    case "json":
    case "jsonb":
      return "json";
    default:
      return "string";
  }
}

function mysqlKind(type: string, detail: ColumnDetail | undefined): Kind {
  const base = type.replace(/ unsigned$/, "");
  switch (base) {
    case "tinyint":
      return detail?.precision === 1 ? "boolean" : "long";
    case "bit":
      return detail?.precision === 1 ? "boolean" : "bits";
    case "smallint":
    case "mediumint":
    case "int":
    case "bigint":
    case "year":
      return "long";
    case "float":
    case "double":
      return "double";
    case "decimal":
      return "decimal";
    case "datetime":
    case "timestamp":
      return "timestamp";
    case "json":
      return "json";
    case "blob":
    case "binary":
    case "varbinary":
    case "geometry":
      return "blob";
    case "null":
      return "null";
    default:
      return "string";
  }
}

function planFor(engine: Engine, column: Column, detail: ColumnDetail | undefined): ColumnPlan {
  if (engine === "postgres" && column.type.startsWith("_")) return { kind: "array", element: postgresKind(column.type.slice(1)) };
  return { kind: engine === "postgres" ? postgresKind(column.type) : mysqlKind(column.type, detail) };
}

/** "00101" -> base64 of the bytes, as BIT(n) arrives in the gateway's conventions. */
function bitsToBase64(bits: string): string {
  const padded = bits.padStart(Math.ceil(bits.length / 8) * 8, "0");
  const bytes = Buffer.alloc(padded.length / 8);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(padded.slice(i * 8, i * 8 + 8), 2);
  return bytes.toString("base64");
}

/** An exact integer as JSON number text (digits as they came), or a JS number's text. */
function integerText(value: unknown): string {
  return typeof value === "string" && /^-?\d+$/.test(value) ? value : textOf(Math.trunc(Number(value)));
}

function doubleText(value: unknown): string {
  if (typeof value === "number") return Number.isFinite(value) ? json(value) : json(textOf(value));
  const number = Number(value);
  return Number.isFinite(number) ? json(number) : json(textOf(value));
}

/** One value as a Field union's JSON text. */
function fieldText(plan: ColumnPlan, value: unknown, options: ResultOptions): string {
  if (value === null || value === undefined) return '{"isNull":true}';
  switch (plan.kind) {
    case "boolean":
      return `{"booleanValue":${value === true || value === 1 || value === "1" || value === "t"}}`;
    case "long":
      return options.longReturnType === "STRING" ? `{"stringValue":${json(textOf(value))}}` : `{"longValue":${integerText(value)}}`;
    case "double":
      return `{"doubleValue":${doubleText(value)}}`;
    case "decimal": {
      if (options.decimalReturnType !== "DOUBLE_OR_LONG") return `{"stringValue":${json(textOf(value))}}`;
      const text = textOf(value);
      return /^-?\d+$/.test(text) ? `{"longValue":${text}}` : `{"doubleValue":${doubleText(text)}}`;
    }
    case "blob":
      return `{"blobValue":${json(textOf(value))}}`;
    case "bits":
      return `{"blobValue":${json(bitsToBase64(textOf(value)))}}`;
    case "timestamp":
      return `{"stringValue":${json(dataApiTimestamp(value))}}`;
    case "json":
      return `{"stringValue":${json(textOf(value))}}`;
    case "array":
      return Array.isArray(value) ? `{"arrayValue":${arrayText(plan.element ?? "string", value)}}` : `{"stringValue":${json(textOf(value))}}`;
    case "null":
      return '{"isNull":true}';
    default:
      return `{"stringValue":${json(textOf(value))}}`;
  }
}

/** An ArrayValue: a typed list by element kind; nested arrays as `arrayValues` of bare ArrayValues. */
function arrayText(element: Kind, values: unknown[]): string {
  if (values.some((value) => Array.isArray(value))) {
    return `{"arrayValues":[${values.map((value) => (Array.isArray(value) ? arrayText(element, value) : "null")).join(",")}]}`;
  }
  const items = (write: (value: unknown) => string) => values.map((value) => (value === null ? "null" : write(value))).join(",");
  switch (element) {
    case "long":
      return `{"longValues":[${items(integerText)}]}`;
    case "double":
      return `{"doubleValues":[${items(doubleText)}]}`;
    case "boolean":
      return `{"booleanValues":[${items((value) => String(value === true))}]}`;
    case "timestamp":
      return `{"stringValues":[${items((value) => json(dataApiTimestamp(value)))}]}`;
    default:
      return `{"stringValues":[${items((value) => json(textOf(value)))}]}`;
  }
}

/** `records` as JSON text. */
export function recordsText(engine: Engine, result: StatementResult, options: ResultOptions): string {
  const details = engine === "mysql" ? result.describeColumns?.() : undefined;
  const plans = result.columns.map((column, i) => planFor(engine, column, details?.[i]));
  const rows = result.rows.map((row) => `[${plans.map((plan, i) => fieldText(plan, row[i], options)).join(",")}]`);
  return `[${rows.join(",")}]`;
}

/** `formattedRecords`: a JSON array text of objects keyed by column name. */
export function formattedRecordsText(engine: Engine, result: StatementResult, options: ResultOptions): string {
  const names = result.columns.map((column) => column.name);
  const details = engine === "mysql" ? result.describeColumns?.() : undefined;
  const plans = result.columns.map((column, i) => planFor(engine, column, details?.[i]));
  const keys = names.map((name) => json(name));
  const valueText = (plan: ColumnPlan, value: unknown): string => {
    if (value === null || value === undefined) return "null";
    switch (plan.kind) {
      case "boolean":
        return String(value === true || value === 1 || value === "1");
      case "long":
        return options.longReturnType === "STRING" ? json(textOf(value)) : integerText(value);
      case "double":
        return doubleText(value);
      case "decimal":
        return options.decimalReturnType === "DOUBLE_OR_LONG" ? doubleText(value) : json(textOf(value));
      case "timestamp":
        return json(dataApiTimestamp(value));
      case "json":
        return json(textOf(value));
      case "bits":
        return json(bitsToBase64(textOf(value)));
      case "array":
        return json(Array.isArray(value) ? plainArray(value) : value);
      default:
        return json(textOf(value));
    }
  };
  const rows = result.rows.map((row) => `{${plans.map((plan, i) => `${keys[i]}:${valueText(plan, row[i])}`).join(",")}}`);
  return `[${rows.join(",")}]`;
}

/** java.sql.Types codes, by the type names the engines report. */
const POSTGRES_JDBC: Record<string, number> = {
  bool: -7,
  int2: 5,
  int4: 4,
  int8: -5,
  oid: -5,
  float4: 7,
  float8: 8,
  numeric: 2,
  text: 12,
  varchar: 12,
  name: 12,
  bpchar: 1,
  bytea: -2,
  date: 91,
  time: 92,
  timestamp: 93,
  timestamptz: 93,
};
const MYSQL_JDBC: Record<string, number> = {
  bit: -7,
  tinyint: -6,
  smallint: 5,
  mediumint: 4,
  int: 4,
  bigint: -5,
  float: 7,
  double: 8,
  decimal: 3,
  char: 1,
  varchar: 12,
  text: -1,
  enum: 1,
  set: 1,
  binary: -2,
  varbinary: -3,
  blob: -4,
  date: 91,
  time: 92,
  datetime: 93,
  timestamp: 93,
  year: 91,
  json: -1,
  null: 0,
};

/** `columnMetadata` as JSON text: name and label are the output name (drizzle keys rows by name). */
export function columnMetadataText(engine: Engine, result: StatementResult): string {
  const details = result.describeColumns?.() ?? [];
  const entries = result.columns.map((column, i): DataApiColumnMetadata => {
    const detail = details[i];
    const kind = planFor(engine, column, detail).kind;
    let typeName: string;
    let type: number;
    if (engine === "postgres") {
      typeName = column.type;
      type = column.type.startsWith("_") ? 2003 : (POSTGRES_JDBC[column.type] ?? 1111);
    } else if (kind === "boolean") {
      typeName = "BIT";
      type = -7;
    } else {
      typeName = column.type.toUpperCase();
      type = MYSQL_JDBC[column.type.replace(/ unsigned$/, "")] ?? 1111;
    }
    const element = engine === "postgres" && column.type.startsWith("_") ? (POSTGRES_JDBC[column.type.slice(1)] ?? 1111) : 0;
    return {
      arrayBaseColumnType: element,
      isAutoIncrement: detail?.autoIncrement ?? false,
      isCaseSensitive: kind === "string" && engine === "postgres",
      isCurrency: column.type === "money",
      isSigned: detail?.signed ?? false,
      label: column.name,
      // PostgreSQL: the output name (drizzle keys rows by it); MySQL: the column's own name, as Connector/J reports it.
      name: engine === "mysql" ? (detail?.originalName ?? column.name) : column.name,
      nullable: detail?.nullable === null || detail?.nullable === undefined ? 2 : detail.nullable ? 1 : 0,
      precision: detail?.precision ?? 0,
      scale: detail?.scale ?? 0,
      schemaName: "",
      tableName: detail?.table ?? "",
      type,
      typeName,
    };
  });
  return json(entries);
}
