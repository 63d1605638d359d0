/**
 * A parameter whose SQL type the caller chose, rather than one the engine infers from a JSON value's
 * shape: the RDS Data API's `longValue` is a BIGINT and its `doubleValue` a DOUBLE even when the
 * double is integral (2.0), and a longValue keeps all 64 bits (it arrives as a digit string beyond
 * 2^53). It travels to `EngineConnection.execute` among ordinary parameters (an object, as the Param
 * type allows) and each engine's parameter encoding recognises it first. On PostgreSQL the type is
 * also written into the SQL as a cast (postgres/data-api-dialect.ts), because that is where PostgreSQL takes it.
 */
export type ParamType = "int8" | "float8";

export class TypedParam {
  constructor(
    readonly type: ParamType,
    /** int8: a number or a digit string; float8: a number or "NaN", "Infinity", "-Infinity". */
    readonly value: number | string,
  ) {}

  /** The value as PostgreSQL reads it in text format. */
  get text(): string {
    return String(this.value);
  }
}
