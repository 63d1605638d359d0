/**
 * Data API parameters -> the engine's statement: `:name` placeholders rewritten into the engine's
 * positional ones, and each Field bound with the type the service gives it (the JDBC binding the
 * service is built on): `longValue` a BIGINT and `doubleValue` a DOUBLE even when integral (TypedParam,
 * which every engine's parameter encoding honours), and on engines that take types from the SQL text
 * a cast per Field and typeHint (each engine's Data API dialect, engines/<engine>/data-api-dialect.ts).
 *
 * So `select :n` answers a longValue, `:a + :b` adds two BIGINTs, `concat(:a, :b)` concatenates text,
 * and a text parameter compared with an integer column fails as it does on the service. A placeholder
 * already followed by a cast (`:x::jsonb`) keeps only that cast.
 */
import type { DataApiArrayValue, SqlParameter } from "../../schemas/data-api.js";
import type { Param } from "../../schemas/query.js";
import type { DataApiDialect } from "../engines/data-api-dialect.js";
import { TypedParam } from "../engines/typed-param.js";
import { DataApiRefusal } from "./errors.js";
import { scanNamedParameters } from "./named-parameters.js";

export interface BoundStatement {
  sql: string;
  params: Param[];
}

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

/**
 * Binds one statement. Refuses several statements in one string (as the service does), parameters
 * named in the SQL but not supplied, and array parameters unless `allowArrays`.
 */
export function bindStatement(sql: string, parameters: readonly SqlParameter[], dialect: DataApiDialect, allowArrays: boolean): BoundStatement {
  const byName = new Map(parameters.map((parameter) => [parameter.name, parameter]));
  const sqlTypeFor = (name: string): string | undefined => {
    const parameter = byName.get(name);
    return parameter === undefined ? undefined : dialect.sqlTypeOf(parameter.value, parameter.typeHint);
  };
  const scanned = scanNamedParameters(sql, dialect, sqlTypeFor);
  if (scanned.multipleStatements) throw new DataApiRefusal("ValidationException", "Multistatements aren't supported.");
  const params = scanned.names.map((name) => {
    const parameter = byName.get(name);
    if (!parameter) throw new DataApiRefusal("BadRequestException", `No value specified for parameter :${name}`);
    return paramOf(parameter, allowArrays);
  });
  return { sql: scanned.text, params };
}
