/**
 * The Data API on PostgreSQL, as the service's JDBC binding behaves. Named parameters become `$n`,
 * one number per distinct name, and each Field is bound with the type the service gives it, written
 * into the SQL as a cast (PostgreSQL takes a parameter's type from there):
 *
 * | Field                    | bound as                                                                 |
 * | ------------------------ | ------------------------------------------------------------------------ |
 * | `longValue`              | `$n::int8`                                                               |
 * | `doubleValue`            | `$n::float8`                                                             |
 * | `booleanValue`           | `$n::bool`                                                               |
 * | `stringValue`            | `$n::text`                                                               |
 * | `stringValue` + typeHint | `::date`, `::time`, `::timestamp`, `::numeric`, `::uuid`; JSON untyped (the column's json or jsonb) |
 * | `blobValue`              | `$n::bytea`                                                              |
 * | `isNull`                 | untyped NULL                                                             |
 *
 * Result columns are written by their type name (int8 as longValue, numeric as decimal text, json and
 * jsonb as text...), arrays (`_int4`...) as arrayValue of their element's kind.
 */
import type { DataApiField, TypeHint } from "../../../schemas/data-api.js";
import type { ColumnPlan, DataApiDialect, FieldKind } from "../data-api-dialect.js";
import { lexSql } from "../sql-segments.js";

/** The type of a stringValue with a typeHint; JSON stays untyped so json and jsonb columns both take it. */
const HINTED_TYPES: Record<TypeHint, string | undefined> = {
  DATE: "date",
  TIME: "time",
  TIMESTAMP: "timestamp",
  DECIMAL: "numeric",
  UUID: "uuid",
  JSON: undefined,
};

/** java.sql.Types codes, by type name. */
const JDBC_TYPES: Record<string, number> = {
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

/** java.sql.Types.ARRAY */
const JDBC_ARRAY = 2003;
/** java.sql.Types.OTHER */
const JDBC_OTHER = 1111;

function kindOf(type: string): FieldKind {
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

/** Array types are named after their element with a leading underscore. */
const elementOf = (type: string): string | undefined => (type.startsWith("_") ? type.slice(1) : undefined);

function planOf(type: string): ColumnPlan {
  const element = elementOf(type);
  return element === undefined ? { kind: kindOf(type) } : { kind: "array", element: kindOf(element) };
}

export const postgresDataApiDialect: DataApiDialect = {
  segments: (sql) => lexSql(sql, "postgres"),
  repeatedNamesShareAValue: true,
  placeholder: (n, sqlType) => (sqlType === undefined ? `$${n}` : `$${n}::${sqlType}`),
  sqlTypeOf(value: DataApiField, typeHint: TypeHint | undefined): string | undefined {
    if (value.longValue !== undefined) return "int8";
    if (value.doubleValue !== undefined) return "float8";
    if (value.booleanValue !== undefined) return "bool";
    if (value.blobValue !== undefined) return "bytea";
    if (value.stringValue !== undefined) return typeHint === undefined ? "text" : HINTED_TYPES[typeHint];
    return undefined;
  },
  // Type names alone decide: no column details needed.
  columnPlans: (result) => result.columns.map((column) => planOf(column.type)),
  columnType(column, _detail, plan) {
    const element = elementOf(column.type);
    return {
      typeName: column.type,
      type: element === undefined ? (JDBC_TYPES[column.type] ?? JDBC_OTHER) : JDBC_ARRAY,
      arrayBaseColumnType: element === undefined ? 0 : (JDBC_TYPES[element] ?? JDBC_OTHER),
      isCaseSensitive: plan.kind === "string",
      isCurrency: column.type === "money",
      // The output name: drizzle keys rows by it.
      name: column.name,
    };
  },
};
