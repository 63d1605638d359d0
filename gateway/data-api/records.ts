/**
 * Engine results -> the Data API's result shapes, written as JSON text directly so that 64-bit
 * integers keep every digit: `records` (rows of one-member Field unions), `columnMetadata` (all 14
 * members), and `formattedRecords` (formatRecordsAs JSON). Values arrive in the gateway's own JSON
 * conventions (int8/numeric/BIGINT/DECIMAL as exact strings, timestamps ISO-8601, bytes base64, JSON
 * as the database's text) and leave in the service's: timestamps "YYYY-MM-DD HH:MM:SS[.fff]" in UTC
 * without an offset, JSON compacted (the whitespace between tokens dropped, as the service's v2
 * re-serialises it, with every digit kept). Which Field member a column's values take, and the type
 * members of its columnMetadata, are the engine's answers (its DataApiDialect).
 */
import type { DataApiColumnMetadata } from "../../schemas/data-api.js";
import type { ColumnPlan, DataApiDialect, FieldKind } from "../engines/data-api-dialect.js";
import type { StatementResult } from "../engines/engine.js";
import { compactJson, JsonText } from "../engines/json-text.js";

export interface ResultOptions {
  decimalReturnType?: "STRING" | "DOUBLE_OR_LONG" | undefined;
  longReturnType?: "STRING" | "LONG" | undefined;
}

const json = JSON.stringify;

/** A value's text: strings as they are, database JSON compacted, objects as JSON, numbers and booleans printed. */
function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value instanceof JsonText) return compactJson(value.text);
  if (typeof value === "object" && value !== null) return json(value);
  return String(value);
}

/** "2024-01-15T03:34:56.123Z" or "2024-01-15T03:34:56" -> "2024-01-15 03:34:56.123" / "2024-01-15 03:34:56". */
function dataApiTimestamp(value: unknown): string {
  const text = textOf(value);
  if (text.charCodeAt(10) !== 84 /* T */) return text;
  const end = text.endsWith("Z") ? text.length - 1 : text.length;
  return `${text.slice(0, 10)} ${text.slice(11, end)}`;
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
function arrayText(element: FieldKind, values: unknown[]): string {
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
export function recordsText(dialect: DataApiDialect, result: StatementResult, options: ResultOptions): string {
  const plans = dialect.columnPlans(result);
  const rows = result.rows.map((row) => `[${plans.map((plan, i) => fieldText(plan, row[i], options)).join(",")}]`);
  return `[${rows.join(",")}]`;
}

/** `formattedRecords`: a JSON array text of objects keyed by column name. */
export function formattedRecordsText(dialect: DataApiDialect, result: StatementResult, options: ResultOptions): string {
  const plans = dialect.columnPlans(result);
  const keys = result.columns.map((column) => json(column.name));
  const rows = result.rows.map((row) => `{${plans.map((plan, i) => `${keys[i]}:${formattedValueText(plan, row[i], options)}`).join(",")}}`);
  return `[${rows.join(",")}]`;
}

/** One value of a formattedRecords object: an array's elements each written as its element type's scalar is. */
function formattedValueText(plan: ColumnPlan, value: unknown, options: ResultOptions): string {
  if (plan.kind !== "array") return formattedScalarText(plan.kind, value, options);
  if (!Array.isArray(value)) return value === null || value === undefined ? "null" : json(textOf(value));
  return formattedArrayText(plan.element ?? "string", value, options);
}

function formattedArrayText(element: FieldKind, values: unknown[], options: ResultOptions): string {
  const items = values.map((value) => (Array.isArray(value) ? formattedArrayText(element, value, options) : formattedScalarText(element, value, options)));
  return `[${items.join(",")}]`;
}

/** A scalar of one kind as formattedRecords writes it (an array's elements included). */
function formattedScalarText(kind: FieldKind, value: unknown, options: ResultOptions): string {
  if (value === null || value === undefined) return "null";
  switch (kind) {
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
    case "bits":
      return json(bitsToBase64(textOf(value)));
    default:
      return json(textOf(value));
  }
}

/** `columnMetadata` as JSON text: the label is the output name, the other type members are the engine's. */
export function columnMetadataText(dialect: DataApiDialect, result: StatementResult): string {
  const details = result.describeColumns?.() ?? [];
  const plans = dialect.columnPlans(result, details);
  const entries = result.columns.map((column, i): DataApiColumnMetadata => {
    const detail = details[i];
    const type = dialect.columnType(column, detail, plans[i] as ColumnPlan);
    return {
      arrayBaseColumnType: type.arrayBaseColumnType,
      isAutoIncrement: detail?.autoIncrement ?? false,
      isCaseSensitive: type.isCaseSensitive,
      isCurrency: type.isCurrency,
      isSigned: detail?.signed ?? false,
      label: column.name,
      name: type.name,
      nullable: detail?.nullable === null || detail?.nullable === undefined ? 2 : detail.nullable ? 1 : 0,
      precision: detail?.precision ?? 0,
      scale: detail?.scale ?? 0,
      schemaName: "",
      tableName: detail?.table ?? "",
      type: type.type,
      typeName: type.typeName,
    };
  });
  return json(entries);
}
