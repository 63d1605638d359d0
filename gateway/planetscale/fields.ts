/**
 * Result columns as Vitess's query.Field: the type from MySQL's column type byte and flags exactly as
 * Vitess's `sqltypes.MySQLToType` derives it (vitessio/vitess go/sqltypes/type.go: the signedness of
 * integers, BINARY flag for the string types, ENUM and SET flags), which is what the driver's `cast`
 * reads, together with the character set (63, binary: bytes). MariaDB's JSON is LONGTEXT marked as
 * JSON in its extended metadata: reported as JSON, as MySQL's own JSON type is.
 */
import type { Column } from "../../schemas/query.js";
import type { PlanetscaleField } from "../../schemas/planetscale.js";
import type { ColumnDetail } from "../engines/engine.js";

const MYSQL_TO_VITESS: Record<number, string> = {
  0: "DECIMAL",
  1: "INT8",
  2: "INT16",
  3: "INT32",
  4: "FLOAT32",
  5: "FLOAT64",
  6: "NULL",
  7: "TIMESTAMP",
  8: "INT64",
  9: "INT24",
  10: "DATE",
  11: "TIME",
  12: "DATETIME",
  13: "YEAR",
  14: "DATE",
  15: "VARCHAR",
  16: "BIT",
  17: "TIMESTAMP",
  18: "DATETIME",
  19: "TIME",
  245: "JSON",
  246: "DECIMAL",
  247: "ENUM",
  248: "SET",
  249: "TEXT",
  250: "TEXT",
  251: "TEXT",
  252: "TEXT",
  253: "VARCHAR",
  254: "CHAR",
  255: "GEOMETRY",
};

const UNSIGNED = 32;
const BINARY = 128;
const ENUM = 256;
const SET = 2048;
const SIGNED_INTEGERS = new Set(["INT8", "INT16", "INT24", "INT32", "INT64"]);

/** Vitess's type for a MySQL column type byte and flags (modifyType in go/sqltypes/type.go). */
export function vitessType(mysqlType: number, flags: number): string {
  const type = MYSQL_TO_VITESS[mysqlType] ?? "VARBINARY";
  if (SIGNED_INTEGERS.has(type)) return flags & UNSIGNED ? `U${type}` : type;
  switch (type) {
    case "TEXT":
      return flags & BINARY ? "BLOB" : "TEXT";
    case "VARCHAR":
      return flags & BINARY ? "VARBINARY" : "VARCHAR";
    case "CHAR":
      if (flags & BINARY) return "BINARY";
      if (flags & ENUM) return "ENUM";
      if (flags & SET) return "SET";
      return "CHAR";
    default:
      return type;
  }
}

/** One column's field; the details are the engine's (MySQL's column definition). */
export function planetscaleField(column: Column, detail: ColumnDetail | undefined): PlanetscaleField {
  const field: PlanetscaleField = { name: column.name };
  const flags = detail?.flags ?? 0;
  const type = column.type === "json" ? "JSON" : column.type === "null" ? "NULL" : vitessType(detail?.typeId ?? 253, flags);
  // protojson leaves the zero value of an enum out: NULL_TYPE is 0, and the driver fills in "NULL".
  if (type !== "NULL") field.type = type;
  if (detail === undefined) return field;
  if (detail.table !== "") field.table = detail.table;
  if (detail.originalTable) field.orgTable = detail.originalTable;
  if (detail.schema) field.database = detail.schema;
  if (detail.originalName !== "") field.orgName = detail.originalName;
  if (detail.precision !== 0) field.columnLength = detail.precision;
  if (detail.characterSet) field.charset = detail.characterSet;
  if (detail.scale !== 0) field.decimals = detail.scale;
  if (flags !== 0) field.flags = flags;
  return field;
}
