/**
 * Shapes engine results for the wire: rows as objects keyed by column name (default) or as arrays,
 * serialised straight to the response JSON (the envelope is assembled here so the hot path makes one
 * pass over the rows; column lists of cached statements are serialised once). JSON columns are
 * embedded as the database's own text (JsonText): never parsed, so every digit the database stored
 * reaches the caller.
 */
import type { StatementResult } from "../engines/engine.js";
import { JsonText } from "../engines/json-text.js";

/**
 * Column types whose values the engines hand on as JsonText (PostgreSQL json/jsonb and their arrays;
 * MySQL JSON). A JsonText anywhere else would still be valid JSON (its toJSON), only parsed.
 */
const JSON_TYPES = new Set(["json", "jsonb", "_json", "_jsonb"]);

/** What serialising rows needs to know of a column list, worked out once per list (a cached statement keeps its list). */
interface ColumnsShape {
  json: string;
  names: string[];
  /** No column is named __proto__: rows can be plain objects. */
  plain: boolean;
  /** Which columns hold database JSON; undefined when none does. */
  isJson: boolean[] | undefined;
}

const shapes = new WeakMap<object, ColumnsShape>();

function shapeOf(columns: StatementResult["columns"]): ColumnsShape {
  let shape = shapes.get(columns);
  if (shape === undefined) {
    const names = columns.map((column) => column.name);
    const isJson = columns.map((column) => JSON_TYPES.has(column.type));
    shape = { json: JSON.stringify(columns), names, plain: !names.includes("__proto__"), isJson: isJson.some(Boolean) ? isJson : undefined };
    shapes.set(columns, shape);
  }
  return shape;
}

/** A row as an object keyed by column name. */
function rowObject(row: readonly unknown[], { names, plain }: ColumnsShape): Record<string, unknown> {
  // A column named __proto__ must become a property, not the object's prototype.
  const object: Record<string, unknown> = plain ? {} : (Object.create(null) as Record<string, unknown>);
  for (let c = 0; c < names.length; c++) object[names[c] as string] = row[c];
  return object;
}

function rowsAsObjects(result: StatementResult, shape: ColumnsShape): Record<string, unknown>[] {
  const rows = result.rows;
  const objects = new Array<Record<string, unknown>>(rows.length);
  for (let r = 0; r < rows.length; r++) objects[r] = rowObject(rows[r] as unknown[], shape);
  return objects;
}

/** A value's JSON text: database JSON as the server printed it (also inside arrays), anything else stringified. */
function valueJson(value: unknown): string {
  if (value instanceof JsonText) return value.text;
  if (Array.isArray(value)) return `[${value.map(valueJson).join(",")}]`;
  return JSON.stringify(value) ?? "null";
}

/** One row's JSON text with database JSON embedded as it is. Duplicate column names: the last wins, as in an object. */
function jsonTextRow(columns: StatementResult["columns"], rowMode: "object" | "array", isJson: boolean[]): (row: readonly unknown[]) => string {
  const keys = columns.map((column) => JSON.stringify(column.name));
  // JSON.parse keeps the last of repeated keys; leaving earlier ones out makes the text say the same.
  const last = new Map<string, number>();
  keys.forEach((key, c) => last.set(key, c));
  const kept = [...last.entries()];
  return (row) => {
    const values = row.map((value, c) => (isJson[c] ? valueJson(value) : (JSON.stringify(value) ?? "null")));
    if (rowMode === "array") return `[${values.join(",")}]`;
    return `{${kept.map(([key, c]) => `${key}:${values[c]}`).join(",")}}`;
  };
}

/** The rows' JSON text with database JSON embedded as it is. */
function rowsWithJsonText(result: StatementResult, rowMode: "object" | "array", isJson: boolean[]): string {
  const toJson = jsonTextRow(result.columns, rowMode, isJson);
  return `[${result.rows.map((row) => toJson(row)).join(",")}]`;
}

function rowsJson(result: StatementResult, rowMode: "object" | "array", shape: ColumnsShape): string {
  if (result.columns.length === 0) return JSON.stringify(result.rows);
  // Which columns hold database JSON goes by the type the engine names (MariaDB's JSON alias is named json too).
  if (shape.isJson) return rowsWithJsonText(result, rowMode, shape.isJson);
  return JSON.stringify(rowMode === "array" ? result.rows : rowsAsObjects(result, shape));
}

/** The JSON text of a QueryResult, plus `attempts` (and a consistency token) when given. */
export function serializeResult(result: StatementResult, rowMode: "object" | "array", attempts?: number, consistencyToken?: string): string {
  const shape = shapeOf(result.columns);
  const columns = shape.json;
  const rows = rowsJson(result, rowMode, shape);
  const token = consistencyToken === undefined ? "" : `,"consistencyToken":${JSON.stringify(consistencyToken)}`;
  const tail = attempts === undefined ? "}" : `,"attempts":${attempts}${token}}`;
  const insertId = result.lastInsertId === undefined ? "" : `,"lastInsertId":${JSON.stringify(result.lastInsertId)}`;
  return `{"command":${JSON.stringify(result.command)},"columns":${columns},"rows":${rows},"rowCount":${result.rowCount}${insertId}${tail}`;
}

/**
 * One row's JSON text, for results sent a row at a time (streams): the same text a row has inside
 * serializeResult's `rows`.
 */
export function rowSerializer(columns: StatementResult["columns"], rowMode: "object" | "array"): (row: readonly unknown[]) => string {
  const shape = shapeOf(columns);
  if (shape.isJson) return jsonTextRow(columns, rowMode, shape.isJson);
  if (rowMode === "array") return (row) => JSON.stringify(row);
  return (row) => JSON.stringify(rowObject(row, shape));
}
