/**
 * PostgreSQL text values <-> JSON. Owns the type-parser tables handed to `pg` (one per bigNumbers
 * mode), the OID -> type-name table, and parameter preparation. Conventions: int8/numeric exact
 * strings unless asked otherwise, timestamps ISO-8601, date/time/interval as PostgreSQL prints them,
 * bytea base64, json/jsonb as the server's own text (JsonText, never parsed), arrays as arrays,
 * non-finite floats as strings ("NaN", "Infinity"). Object and array parameters are bound from the
 * caller's own JSON text when the HTTP layer found it.
 */
import { parse as parseArray } from "postgres-array";
import type { Param } from "../../../schemas/query.js";
import type { ColumnDetail } from "../engine.js";
import { jsonArrayElements, jsonSourceOf, JsonText } from "../json-text.js";
import { TypedParam } from "../typed-param.js";

export type Parser = (text: string) => unknown;

const identity: Parser = (text) => text;
const parseBool: Parser = (text) => text === "t";
const parseInteger: Parser = (text) => Number.parseInt(text, 10);
const parseFloatKeepingSpecials: Parser = (text) => {
  const value = Number.parseFloat(text);
  return Number.isFinite(value) ? value : text;
};
const parseBigNumber: Parser = (text) => {
  const value = Number(text);
  return Number.isFinite(value) ? value : text;
};
/** json and jsonb stay the server's text: parsing would round numbers beyond a double's precision. */
const parseJson: Parser = (text) => new JsonText(text);

/** bytea arrives in hex output format (\x4142...). */
const parseBytea: Parser = (text) =>
  text.startsWith("\\x") ? Buffer.from(text.slice(2), "hex").toString("base64") : Buffer.from(text, "latin1").toString("base64");

/** "2024-01-02 03:04:05.123" -> "2024-01-02T03:04:05.123" (infinity and BC dates stay as printed). */
const parseTimestamp: Parser = (text) =>
  text.charCodeAt(4) === 45 && !text.endsWith("BC") ? `${text.slice(0, 10)}T${text.slice(11)}` : text;

/** "2024-01-02 03:04:05+00" -> "2024-01-02T03:04:05Z"; other offsets become +HH:MM. */
const parseTimestampTz: Parser = (text) => {
  if (text.charCodeAt(4) !== 45 || text.endsWith("BC")) return text;
  const iso = `${text.slice(0, 10)}T${text.slice(11)}`;
  const offsetAt = Math.max(iso.lastIndexOf("+"), iso.lastIndexOf("-"));
  if (offsetAt < 19) return iso;
  const offset = iso.slice(offsetAt);
  if (offset === "+00") return `${iso.slice(0, offsetAt)}Z`;
  return offset.length === 3 ? `${iso}:00` : iso;
};

const arrayOf =
  (element: Parser): Parser =>
  (text) =>
    parseArray(text, element);

const BASE_PARSERS = new Map<number, Parser>([
  [16, parseBool],
  [17, parseBytea],
  [21, parseInteger],
  [23, parseInteger],
  [26, parseInteger],
  [114, parseJson],
  [3802, parseJson],
  [700, parseFloatKeepingSpecials],
  [701, parseFloatKeepingSpecials],
  [1114, parseTimestamp],
  [1184, parseTimestampTz],
  [1000, arrayOf(parseBool)],
  [1001, arrayOf(parseBytea)],
  [1005, arrayOf(parseInteger)],
  [1007, arrayOf(parseInteger)],
  [1028, arrayOf(parseInteger)],
  [1021, arrayOf(parseFloatKeepingSpecials)],
  [1022, arrayOf(parseFloatKeepingSpecials)],
  [1115, arrayOf(parseTimestamp)],
  [1185, arrayOf(parseTimestampTz)],
  [199, arrayOf(parseJson)],
  [3807, arrayOf(parseJson)],
  // Arrays whose elements stay text.
  ...[1009, 1014, 1015, 1182, 1183, 1187, 1270, 2951, 1016, 1231, 791, 1041, 651, 1040].map(
    (oid) => [oid, arrayOf(identity)] as [number, Parser],
  ),
]);

const BIG_NUMBER_PARSERS = new Map<number, Parser>([
  [20, parseBigNumber],
  [1700, parseBigNumber],
  [1016, arrayOf(parseBigNumber)],
  [1231, arrayOf(parseBigNumber)],
]);

/** The shape `pg` expects for `types` on a query. */
export interface TypeParserSet {
  getTypeParser(oid: number, format?: string): Parser;
}

function parserSet(overrides: Map<number, Parser>): TypeParserSet {
  return {
    getTypeParser: (oid) => overrides.get(oid) ?? BASE_PARSERS.get(oid) ?? identity,
  };
}

/** How values come back: bigNumbers' two modes, or "text", every value as the server printed it. */
export type ValueMode = "string" | "number" | "text";

export const TYPE_PARSERS: Record<ValueMode, TypeParserSet> = {
  string: parserSet(new Map()),
  number: parserSet(BIG_NUMBER_PARSERS),
  text: { getTypeParser: () => identity },
};

/** Built-in type names by OID; others are resolved from pg_type once and cached. */
export const BUILTIN_TYPE_NAMES = new Map<number, string>([
  [16, "bool"],
  [17, "bytea"],
  [18, "char"],
  [19, "name"],
  [20, "int8"],
  [21, "int2"],
  [23, "int4"],
  [24, "regproc"],
  [25, "text"],
  [26, "oid"],
  [28, "xid"],
  [114, "json"],
  [142, "xml"],
  [600, "point"],
  [650, "cidr"],
  [700, "float4"],
  [701, "float8"],
  [705, "unknown"],
  [790, "money"],
  [829, "macaddr"],
  [869, "inet"],
  [1042, "bpchar"],
  [1043, "varchar"],
  [1082, "date"],
  [1083, "time"],
  [1114, "timestamp"],
  [1184, "timestamptz"],
  [1186, "interval"],
  [1266, "timetz"],
  [1560, "bit"],
  [1562, "varbit"],
  [1700, "numeric"],
  [2205, "regclass"],
  [2249, "record"],
  [2278, "void"],
  [2950, "uuid"],
  [3802, "jsonb"],
  [3614, "tsvector"],
  [3904, "int4range"],
  [3906, "numrange"],
  [3908, "tsrange"],
  [3910, "tstzrange"],
  [3912, "daterange"],
  [3926, "int8range"],
  [199, "_json"],
  [651, "_cidr"],
  [791, "_money"],
  [1000, "_bool"],
  [1001, "_bytea"],
  [1005, "_int2"],
  [1007, "_int4"],
  [1009, "_text"],
  [1014, "_bpchar"],
  [1015, "_varchar"],
  [1016, "_int8"],
  [1021, "_float4"],
  [1022, "_float8"],
  [1028, "_oid"],
  [1040, "_macaddr"],
  [1041, "_inet"],
  [1115, "_timestamp"],
  [1182, "_date"],
  [1183, "_time"],
  [1185, "_timestamptz"],
  [1187, "_interval"],
  [1231, "_numeric"],
  [1270, "_timetz"],
  [2951, "_uuid"],
  [3807, "_jsonb"],
]);

/** Arrays of types that are not built in (enums, domains...) keep their elements as text. */
export const parseTextArray: Parser = arrayOf(identity);

/**
 * The parsers for a result's fields, in column order. `typeNames` holds names learned from pg_type,
 * so arrays of non-built-in types (names starting with "_") are parsed as arrays too.
 */
export function parsersFor(
  mode: ValueMode,
  fields: readonly { dataTypeID: number }[],
  typeNames?: Map<number, string>,
): Parser[] {
  const set = TYPE_PARSERS[mode];
  if (mode === "text") return fields.map(() => identity);
  return fields.map((field) => {
    const parser = set.getTypeParser(field.dataTypeID);
    return parser === identity && typeNames?.get(field.dataTypeID)?.startsWith("_") ? parseTextArray : parser;
  });
}

function isByteaParam(value: object): value is { $bytea: string } {
  return "$bytea" in value && typeof value.$bytea === "string";
}

function isJsonTextParam(value: object): value is { $json: string } {
  return "$json" in value && typeof value.$json === "string" && Object.keys(value).length === 1;
}

/** One element of an array literal: quoted, with backslashes and quotes escaped. */
function quoted(text: string): string {
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** A JSON array as a PostgreSQL array literal: {1,"a b",NULL,{2,3}}. */
function arrayLiteral(values: readonly unknown[]): string {
  const parts = values.map((value): string => {
    if (value === null || value === undefined) return "NULL";
    if (Array.isArray(value)) return arrayLiteral(value);
    return quoted(typeof value === "string" ? value : typeof value === "number" || typeof value === "boolean" ? String(value) : JSON.stringify(value));
  });
  return `{${parts.join(",")}}`;
}

/** The same literal from the caller's JSON text: numbers and nested objects keep the caller's digits. */
function arrayLiteralFromSource(source: string): string {
  const parts = jsonArrayElements(source).map((element): string => {
    switch (element.charCodeAt(0)) {
      case 0x5b /* [ */:
        return arrayLiteralFromSource(element);
      case 0x22 /* " */:
        return quoted(JSON.parse(element) as string);
      case 0x6e /* n */:
        return "NULL";
      default:
        return quoted(element);
    }
  });
  return `{${parts.join(",")}}`;
}

/**
 * A JSON parameter as PostgreSQL receives it: text for scalars, array literals for arrays, JSON text
 * for objects (the caller's own text when known, so no digit is lost), the text of `{"$json": text}`
 * as it is, and raw bytes (binary format) for `{"$bytea": base64}`.
 */
export function encodeParam(value: Param): string | Buffer | null {
  if (value === null) return null;
  switch (typeof value) {
    case "string":
      return value;
    case "number":
    case "boolean":
      return String(value);
    default: {
      if (value instanceof TypedParam) return value.text;
      const source = jsonSourceOf(value);
      if (Array.isArray(value)) return source === undefined ? arrayLiteral(value) : arrayLiteralFromSource(source);
      if (isByteaParam(value)) return Buffer.from(value.$bytea, "base64");
      if (isJsonTextParam(value)) return value.$json;
      return source ?? JSON.stringify(value);
    }
  }
}

export function encodeParams(params: readonly Param[]): (string | Buffer | null)[] {
  const encoded = new Array<string | Buffer | null>(params.length);
  for (let i = 0; i < params.length; i++) encoded[i] = encodeParam(params[i] as Param);
  return encoded;
}

/** Precision of the built-in types without a type modifier (pgjdbc's convention). */
const BUILTIN_PRECISION = new Map<number, number>([
  [16, 1],
  [20, 19],
  [21, 5],
  [23, 10],
  [26, 10],
  [700, 8],
  [701, 17],
  [25, 2147483647],
  [1082, 13],
  [1083, 15],
  [1114, 29],
  [1184, 35],
  [2950, 36],
]);
const SIGNED = new Set([20, 21, 23, 700, 701, 1700]);

/**
 * Details of result columns from the row description alone (no catalog lookups): precision and scale
 * from the type modifier (numeric(p,s), varchar(n)) or the type; the table is not named.
 */
export function columnDetails(
  fields: readonly { name: string; dataTypeID: number; dataTypeModifier?: number; dataTypeSize?: number; tableID?: number; columnID?: number }[],
): ColumnDetail[] {
  return fields.map((field) => {
    const modifier = field.dataTypeModifier ?? -1;
    let precision = BUILTIN_PRECISION.get(field.dataTypeID) ?? 0;
    let scale = field.dataTypeID === 1114 || field.dataTypeID === 1184 ? 6 : 0;
    if (field.dataTypeID === 1700 && modifier >= 4) {
      precision = ((modifier - 4) >> 16) & 0xffff;
      scale = (modifier - 4) & 0xffff;
    } else if ((field.dataTypeID === 1043 || field.dataTypeID === 1042) && modifier >= 4) {
      precision = modifier - 4;
    } else if (field.dataTypeID === 1043 || field.dataTypeID === 1042) {
      precision = 2147483647;
    }
    return {
      table: "",
      originalName: field.name,
      nullable: null,
      autoIncrement: false,
      signed: SIGNED.has(field.dataTypeID),
      precision,
      scale,
      typeId: field.dataTypeID,
      typeSize: field.dataTypeSize ?? -1,
      typeModifier: modifier,
      tableId: field.tableID ?? 0,
      columnNumber: field.columnID ?? 0,
    };
  });
}
