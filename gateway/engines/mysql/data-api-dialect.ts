/**
 * The Data API on MySQL, as the service's JDBC binding (Connector/J) behaves. Named parameters become
 * `?`, one per occurrence (a repeated name is bound again). Types travel with the values, not in the
 * SQL: `longValue` as BIGINT and `doubleValue` as DOUBLE (TypedParam), `booleanValue` as TINYINT 1/0,
 * `stringValue` (with any typeHint) as a string, `blobValue` as bytes, `isNull` as NULL.
 *
 * Result columns are written by their type name, with TINYINT(1) and BIT(1) as booleans (which is why
 * the plans need the columns' details), other BIT(n) as bytes; `columnMetadata` names a column by its
 * own name in its table, as Connector/J reports it.
 */
import type { ColumnDetail } from "../engine.js";
import type { ColumnPlan, DataApiDialect, FieldKind } from "../data-api-dialect.js";
import { lexSql } from "../sql-segments.js";

/** java.sql.Types codes, by type name (without " unsigned"). */
const JDBC_TYPES: Record<string, number> = {
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

/** java.sql.Types.BIT, which the service reports for the columns it writes as booleans. */
const JDBC_BIT = -7;
/** java.sql.Types.OTHER */
const JDBC_OTHER = 1111;

const baseType = (type: string): string => type.replace(/ unsigned$/, "");

function kindOf(type: string, detail: ColumnDetail | undefined): FieldKind {
  switch (baseType(type)) {
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

export const mysqlDataApiDialect: DataApiDialect = {
  segments: (sql) => lexSql(sql, "mysql"),
  repeatedNamesShareAValue: false,
  placeholder: () => "?",
  sqlTypeOf: () => undefined,
  columnPlans(result, details = result.describeColumns?.()): ColumnPlan[] {
    return result.columns.map((column, i) => ({ kind: kindOf(column.type, details?.[i]) }));
  },
  columnType(column, detail, plan) {
    const boolean = plan.kind === "boolean";
    return {
      typeName: boolean ? "BIT" : column.type.toUpperCase(),
      type: boolean ? JDBC_BIT : (JDBC_TYPES[baseType(column.type)] ?? JDBC_OTHER),
      arrayBaseColumnType: 0,
      isCaseSensitive: false,
      isCurrency: false,
      name: detail?.originalName ?? column.name,
    };
  },
};
