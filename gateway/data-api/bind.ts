/**
 * Data API parameters -> the engine's statement: `:name` placeholders rewritten to `$n`/`?`, and each
 * Field bound with the type the service gives it (the JDBC binding the service is built on):
 *
 * | Field                          | PostgreSQL                          | MySQL            |
 * | ------------------------------ | ----------------------------------- | ---------------- |
 * | `longValue`                    | `$n::int8`                          | BIGINT           |
 * | `doubleValue`                  | `$n::float8`                        | DOUBLE           |
 * | `booleanValue`                 | `$n::bool`                          | TINYINT 1/0      |
 * | `stringValue`                  | `$n::text`                          | string           |
 * | `stringValue` + typeHint       | `::date`, `::time`, `::timestamp`, `::numeric`, `::uuid`; JSON untyped (the column's json or jsonb) | string |
 * | `blobValue`                    | `$n::bytea`                         | bytes            |
 * | `isNull`                       | untyped NULL                        | NULL             |
 *
 * So `select :n` answers a longValue, `:a + :b` adds two BIGINTs, `concat(:a, :b)` concatenates text,
 * and a text parameter compared with an integer column fails as it does on the service. A placeholder
 * already followed by a cast (`:x::jsonb`) keeps only that cast.
 */
import type { DataApiArrayValue, DataApiField, SqlParameter, TypeHint } from "../../schemas/data-api.js";
import type { Param } from "../../schemas/query.js";
import { TypedParam } from "../engines/typed-param.js";
import { DataApiRefusal } from "./errors.js";
import { scanNamedParameters } from "./named-parameters.js";

export interface BoundStatement {
  sql: string;
  params: Param[];
}

/** PostgreSQL's type for a stringValue with a typeHint; JSON stays untyped so json and jsonb columns both take it. */
const HINTED_CASTS: Record<TypeHint, string | undefined> = {
  DATE: "date",
  TIME: "time",
  TIMESTAMP: "timestamp",
  DECIMAL: "numeric",
  UUID: "uuid",
  JSON: undefined,
};

function arrayElements(array: DataApiArrayValue): unknown[] {
  const list = array.booleanValues ?? array.longValues ?? array.doubleValues ?? array.stringValues;
  if (list) return list;
  return (array.arrayValues ?? []).map((inner) => (inner === null ? null : arrayElements(inner)));
}

function paramOf(parameter: SqlParameter, allowArrays: boolean): Param {
  const value = parameter.value;
  if (value.isNull) return null;
  if (value.booleanValue !== undefined) return value.booleanValue;
  // TypedParam is an object, which is what the Param type's record branch describes.
  if (value.longValue !== undefined) return new TypedParam("int8", value.longValue) as unknown as Param;
  if (value.doubleValue !== undefined) return new TypedParam("float8", value.doubleValue) as unknown as Param;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.blobValue !== undefined) return { $bytea: value.blobValue };
  if (value.arrayValue !== undefined) {
    if (!allowArrays) throw new DataApiRefusal("BadRequestException", "Array parameters are not supported.");
    return arrayElements(value.arrayValue);
  }
  return null;
}

/** The PostgreSQL type the service gives a Field, or undefined to let PostgreSQL infer it. */
export function postgresTypeOf(value: DataApiField, typeHint: TypeHint | undefined): string | undefined {
  if (value.longValue !== undefined) return "int8";
  if (value.doubleValue !== undefined) return "float8";
  if (value.booleanValue !== undefined) return "bool";
  if (value.blobValue !== undefined) return "bytea";
  if (value.stringValue !== undefined) return typeHint === undefined ? "text" : HINTED_CASTS[typeHint];
  return undefined;
}

/**
 * Binds one statement. Refuses several statements in one string (as the service does), parameters
 * named in the SQL but not supplied, and array parameters unless `allowArrays`.
 */
export function bindStatement(sql: string, parameters: readonly SqlParameter[], engine: "postgres" | "mysql", allowArrays: boolean): BoundStatement {
  const byName = new Map(parameters.map((parameter) => [parameter.name, parameter]));
  const castFor = (name: string): string | undefined => {
    const parameter = byName.get(name);
    return parameter === undefined ? undefined : postgresTypeOf(parameter.value, parameter.typeHint);
  };
  const scanned = scanNamedParameters(sql, engine, castFor);
  if (scanned.multipleStatements) throw new DataApiRefusal("ValidationException", "Multistatements aren't supported.");
  const params = scanned.names.map((name) => {
    const parameter = byName.get(name);
    if (!parameter) throw new DataApiRefusal("BadRequestException", `No value specified for parameter :${name}`);
    return paramOf(parameter, allowArrays);
  });
  return { sql: scanned.text, params };
}
