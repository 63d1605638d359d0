/**
 * MySQL/MariaDB values <-> JSON, with the PostgreSQL engine's conventions wherever the types
 * correspond: BIGINT and DECIMAL as exact strings unless numbers are asked for, DATETIME as ISO-8601
 * without an offset, TIMESTAMP as ISO-8601 UTC ("Z"; sessions run with time_zone '+00:00'), DATE and
 * TIME as printed, JSON as the server's own text (JsonText, never parsed), binary strings and BLOBs as
 * base64, BIT as a string of 0s and 1s, ENUM and SET as their text. mysql2 is configured
 * (supportBigNumbers, bigNumberStrings, dateStrings, jsonStrings) so that nothing is lost before these
 * converters see it.
 */
import mysql from "mysql2";
import type { Column, Param } from "../../../schemas/query.js";
import type { ColumnDetail } from "../engine.js";
import { jsonSourceOf, JsonText } from "../json-text.js";
import { TypedParam } from "../typed-param.js";

/**
 * mysql2's typed-parameter factories, read once: `mysql.TypedParameter` is a getter that runs
 * `require()` on every access (about 5 µs, a module-cache lookup and path resolution), which put a
 * module load on every parameter bound.
 */
const TypedParameter = mysql.TypedParameter;

/** The parts of mysql2's column definition the conversions use. */
export interface MysqlField {
  name: string;
  orgName?: string;
  table?: string;
  orgTable?: string;
  /** The database the column's table is in. */
  schema?: string;
  decimals?: number;
  columnType: number;
  flags: number;
  characterSet: number;
  columnLength: number;
  extendedTypeName?: string;
  extendedFormat?: string;
}

export type Converter = (value: unknown) => unknown;

const T = {
  DECIMAL: 0x00,
  TINY: 0x01,
  SHORT: 0x02,
  LONG: 0x03,
  FLOAT: 0x04,
  DOUBLE: 0x05,
  NULL: 0x06,
  TIMESTAMP: 0x07,
  LONGLONG: 0x08,
  INT24: 0x09,
  DATE: 0x0a,
  TIME: 0x0b,
  DATETIME: 0x0c,
  YEAR: 0x0d,
  NEWDATE: 0x0e,
  VARCHAR: 0x0f,
  BIT: 0x10,
  JSON: 0xf5,
  NEWDECIMAL: 0xf6,
  ENUM: 0xf7,
  SET: 0xf8,
  TINY_BLOB: 0xf9,
  MEDIUM_BLOB: 0xfa,
  LONG_BLOB: 0xfb,
  BLOB: 0xfc,
  VAR_STRING: 0xfd,
  STRING: 0xfe,
  GEOMETRY: 0xff,
} as const;

const NOT_NULL_FLAG = 1;
const UNSIGNED_FLAG = 32;
const AUTO_INCREMENT_FLAG = 512;
const ENUM_FLAG = 256;
const SET_FLAG = 2048;
/** The `binary` character set: bytes, not text. */
const BINARY_CHARSET = 63;

const NUMERIC_NAMES: Record<number, string> = {
  [T.DECIMAL]: "decimal",
  [T.NEWDECIMAL]: "decimal",
  [T.TINY]: "tinyint",
  [T.SHORT]: "smallint",
  [T.INT24]: "mediumint",
  [T.LONG]: "int",
  [T.LONGLONG]: "bigint",
  [T.FLOAT]: "float",
  [T.DOUBLE]: "double",
  [T.YEAR]: "year",
};

const OTHER_NAMES: Record<number, string> = {
  [T.NULL]: "null",
  [T.TIMESTAMP]: "timestamp",
  [T.DATE]: "date",
  [T.NEWDATE]: "date",
  [T.TIME]: "time",
  [T.DATETIME]: "datetime",
  [T.BIT]: "bit",
  [T.JSON]: "json",
  [T.ENUM]: "enum",
  [T.SET]: "set",
  [T.GEOMETRY]: "geometry",
};

function isJson(field: MysqlField): boolean {
  return field.columnType === T.JSON || field.extendedFormat === "json";
}

function isBinary(field: MysqlField): boolean {
  return field.characterSet === BINARY_CHARSET && (field.columnType >= T.TINY_BLOB && field.columnType <= T.STRING || field.columnType === T.VARCHAR);
}

/** The column's type as MySQL names it: bigint, bigint unsigned, decimal, varchar, blob, json, uuid... */
export function typeName(field: MysqlField): string {
  if (field.extendedTypeName) return field.extendedTypeName;
  if (isJson(field)) return "json";
  const numeric = NUMERIC_NAMES[field.columnType];
  if (numeric !== undefined) return field.flags & UNSIGNED_FLAG && field.columnType !== T.YEAR ? `${numeric} unsigned` : numeric;
  if (field.flags & ENUM_FLAG) return "enum";
  if (field.flags & SET_FLAG) return "set";
  const other = OTHER_NAMES[field.columnType];
  if (other !== undefined) return other;
  const binary = field.characterSet === BINARY_CHARSET;
  switch (field.columnType) {
    case T.STRING:
      return binary ? "binary" : "char";
    case T.VARCHAR:
    case T.VAR_STRING:
      return binary ? "varbinary" : "varchar";
    default:
      return binary ? "blob" : "text";
  }
}

export function columnsOf(fields: readonly MysqlField[]): Column[] {
  return fields.map((field) => ({ name: field.name, type: typeName(field) }));
}

export function columnDetails(fields: readonly MysqlField[]): ColumnDetail[] {
  return fields.map((field) => ({
    table: field.table ?? "",
    originalName: field.orgName || field.name,
    nullable: (field.flags & NOT_NULL_FLAG) === 0,
    autoIncrement: (field.flags & AUTO_INCREMENT_FLAG) !== 0,
    signed: NUMERIC_NAMES[field.columnType] !== undefined && (field.flags & UNSIGNED_FLAG) === 0,
    precision: field.columnLength,
    scale: field.decimals ?? 0,
    typeId: field.columnType,
    flags: field.flags,
    characterSet: field.characterSet,
    originalTable: field.orgTable ?? "",
    schema: field.schema ?? "",
  }));
}

const keep: Converter = (value) => value;
const toBase64: Converter = (value) => (Buffer.isBuffer(value) ? value.toString("base64") : value);
const bigNumberAsNumber: Converter = (value) => {
  if (typeof value !== "string") return value;
  const number = Number(value);
  return Number.isFinite(number) ? number : value;
};
/** "2024-01-02 03:04:05.123" -> "2024-01-02T03:04:05.123"; zero dates stay as printed. */
const isoLocal: Converter = (value) =>
  typeof value === "string" && value.length >= 19 && !value.startsWith("0000") ? `${value.slice(0, 10)}T${value.slice(11)}` : value;
const isoUtc: Converter = (value) => {
  const local = isoLocal(value);
  return typeof local === "string" && local.charCodeAt(10) === 84 /* T */ ? `${local}Z` : local;
};
/** JSON stays the server's text: parsing would round numbers beyond a double's precision. */
const jsonText: Converter = (value) => {
  if (value === null) return null;
  const text = Buffer.isBuffer(value) ? value.toString("utf8") : value;
  return typeof text === "string" ? new JsonText(text) : text;
};
/**
 * FLOAT is 4 bytes; the binary protocol hands it over widened to a double (0.1 -> 0.10000000149...).
 * The shortest decimal that is the same float is what MySQL itself would print.
 */
const shortestFloat: Converter = (value) => {
  if (typeof value !== "number" || !Number.isFinite(value)) return value;
  for (let digits = 1; digits <= 9; digits++) {
    const candidate = Number(value.toPrecision(digits));
    if (Math.fround(candidate) === Math.fround(value)) return candidate;
  }
  return value;
};
/**
 * TIME with its declared fraction digits, as the text protocol prints it ("-12:34:56.500"); the binary
 * protocol trims trailing zeros ("-12:34:56.5").
 */
const timeWithDecimals =
  (decimals: number): Converter =>
  (value) => {
    if (typeof value !== "string" || decimals <= 0 || decimals > 6) return value;
    const dot = value.indexOf(".");
    const fraction = dot < 0 ? "" : value.slice(dot + 1);
    return `${dot < 0 ? value : value.slice(0, dot)}.${fraction.padEnd(decimals, "0").slice(0, decimals)}`;
  };

const bitString =
  (length: number): Converter =>
  (value) => {
    if (!Buffer.isBuffer(value)) return value;
    let bits = "";
    for (const byte of value) bits += byte.toString(2).padStart(8, "0");
    return bits.slice(-Math.max(length, 1)).padStart(length, "0");
  };

/** One converter per column, chosen once per result set. */
export function convertersFor(fields: readonly MysqlField[], bigNumbers: "string" | "number"): Converter[] {
  return fields.map((field): Converter => {
    if (isJson(field)) return jsonText;
    switch (field.columnType) {
      case T.LONGLONG:
      case T.DECIMAL:
      case T.NEWDECIMAL:
        return bigNumbers === "number" ? bigNumberAsNumber : keep;
      case T.FLOAT:
        return shortestFloat;
      case T.DATETIME:
        return isoLocal;
      case T.TIMESTAMP:
        return isoUtc;
      case T.BIT:
        return bitString(field.columnLength);
      case T.TIME:
        return timeWithDecimals(field.decimals ?? 0);
      default:
        return isBinary(field) ? toBase64 : keep;
    }
  });
}

/** A value the server printed as text: numbers (parsed by mysql2) back to their decimal text. */
const asText: Converter = (value) => (typeof value === "number" ? String(value) : value);
const floatAsText: Converter = (value) => asText(shortestFloat(value));
/**
 * DATETIME(n) and TIMESTAMP(n) with their declared fraction digits, as the text protocol prints them
 * ("2024-01-02 03:04:05.000"); the binary protocol sends no fraction when it is zero.
 */
const datetimeWithDecimals =
  (decimals: number): Converter =>
  (value) =>
    typeof value === "string" && decimals > 0 && decimals <= 6 && value.length === 19 ? `${value}.${"0".repeat(decimals)}` : value;

/**
 * One converter per column for StatementMode.textValues: every value as MySQL's text protocol carries
 * it, whichever protocol the statement went by — numbers, dates, times, DECIMAL and JSON as the
 * server's text (strings), and values of the binary character set (BINARY, BLOB, BIT) as their bytes
 * (Buffers). For surfaces whose clients parse values by type themselves (PlanetScale's HTTP protocol).
 */
export function textConvertersFor(fields: readonly MysqlField[]): Converter[] {
  return fields.map((field): Converter => {
    switch (field.columnType) {
      case T.FLOAT:
        return floatAsText;
      case T.DATETIME:
      case T.TIMESTAMP:
        return datetimeWithDecimals(field.decimals ?? 0);
      case T.TIME:
        return timeWithDecimals(field.decimals ?? 0);
      default:
        return asText;
    }
  });
}

/** Converts rows in place and returns them. */
export function convertRow(row: unknown[], converters: readonly Converter[]): unknown[] {
  for (let i = 0; i < converters.length; i++) {
    const converter = converters[i] as Converter;
    if (converter !== keep && row[i] !== null) row[i] = converter(row[i]);
  }
  return row;
}

function isByteaParam(value: object): value is { $bytea: string } {
  return "$bytea" in value && typeof value.$bytea === "string";
}

function isJsonTextParam(value: object): value is { $json: string } {
  return "$json" in value && typeof value.$json === "string" && Object.keys(value).length === 1;
}

/**
 * A typed parameter as MySQL's own types: int8 as BIGINT (all 64 bits), float8 as DOUBLE (an integral
 * double too, which mysql2 would otherwise bind as whatever integer type the server hints).
 */
function encodeTyped(param: TypedParam): unknown {
  if (param.type === "int8") return TypedParameter.BIGINT(BigInt(param.value));
  return TypedParameter.DOUBLE(Number(param.value));
}

/**
 * A JSON parameter as mysql2 binds it: integers as BIGINT (exact, and accepted where MySQL insists on
 * an integer such as LIMIT ?), other numbers as DOUBLE, strings as strings (send BIGINT and DECIMAL
 * values as strings to keep precision), booleans as 1/0, `{"$bytea": base64}` as bytes, arrays and
 * objects as JSON text (the caller's own text when known, so no digit is lost; MySQL has no array
 * type), and the text of `{"$json": text}` as it is.
 */
export function encodeParam(value: Param): unknown {
  if (value === null) return null;
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isSafeInteger(value) ? TypedParameter.BIGINT(value) : value;
    default:
      if (value instanceof TypedParam) return encodeTyped(value);
      if (!Array.isArray(value) && isByteaParam(value)) return Buffer.from(value.$bytea, "base64");
      if (!Array.isArray(value) && isJsonTextParam(value)) return value.$json;
      return jsonSourceOf(value) ?? JSON.stringify(value);
  }
}

export function encodeParams(params: readonly Param[]): unknown[] {
  return params.map(encodeParam);
}

/** A cheap size estimate of a converted row, for the result-size limit. */
export function approximateBytes(row: readonly unknown[]): number {
  let bytes = 2;
  for (const value of row) {
    if (value === null || value === undefined) bytes += 4;
    else if (typeof value === "string") bytes += value.length + 3;
    else if (typeof value === "number" || typeof value === "boolean") bytes += 8;
    else if (value instanceof JsonText) bytes += value.text.length;
    else bytes += JSON.stringify(value).length;
  }
  return bytes;
}
