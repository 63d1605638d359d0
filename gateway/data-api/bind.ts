/**
 * Data API parameters -> the engine's statement: `:name` placeholders rewritten to `$n`/`?`, Field
 * unions turned into the gateway's JSON parameters, and on PostgreSQL a cast for each typeHint
 * (DATE, TIME, TIMESTAMP, DECIMAL, UUID) and for bytes. Numbers, booleans and unhinted strings stay
 * untyped, so PostgreSQL infers their type from where they are used.
 */
import type { DataApiArrayValue, SqlParameter, TypeHint } from "../../schemas/data-api.js";
import type { Param } from "../../schemas/query.js";
import { DataApiRefusal } from "./errors.js";
import { scanNamedParameters } from "./named-parameters.js";

export interface BoundStatement {
  sql: string;
  params: Param[];
}

const POSTGRES_CASTS: Partial<Record<TypeHint, string>> = {
  DATE: "date",
  TIME: "time",
  TIMESTAMP: "timestamp",
  DECIMAL: "numeric",
  UUID: "uuid",
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
  if (value.longValue !== undefined) return value.longValue;
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.blobValue !== undefined) return { $bytea: value.blobValue };
  if (value.arrayValue !== undefined) {
    if (!allowArrays) throw new DataApiRefusal("BadRequestException", "Array parameters are not supported.");
    return arrayElements(value.arrayValue);
  }
  return null;
}

function castOf(parameter: SqlParameter | undefined): string | undefined {
  if (!parameter) return undefined;
  if (parameter.value.blobValue !== undefined) return "bytea";
  return parameter.typeHint ? POSTGRES_CASTS[parameter.typeHint] : undefined;
}

/**
 * Binds one statement. Refuses several statements in one string (as the service does), parameters
 * named in the SQL but not supplied, and array parameters unless `allowArrays`.
 */
export function bindStatement(sql: string, parameters: readonly SqlParameter[], engine: "postgres" | "mysql", allowArrays: boolean): BoundStatement {
  const byName = new Map(parameters.map((parameter) => [parameter.name, parameter]));
  const scanned = scanNamedParameters(sql, engine, (name) => castOf(byName.get(name)));
  if (scanned.multipleStatements) throw new DataApiRefusal("ValidationException", "Multistatements aren't supported.");
  const params = scanned.names.map((name) => {
    const parameter = byName.get(name);
    if (!parameter) throw new DataApiRefusal("BadRequestException", `No value specified for parameter :${name}`);
    return paramOf(parameter, allowArrays);
  });
  return { sql: scanned.text, params };
}
