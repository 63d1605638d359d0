/**
 * What the RDS Data API surface asks an engine: how named parameters become the engine's
 * placeholders, the SQL type the service binds each Field with, and how each result column is
 * written back as Fields and described in `columnMetadata`. data-api/ does the rewriting and the
 * formatting and asks these questions; each engine answers them in its own
 * `<engine>/data-api-dialect.ts`, so no Data API code tests which engine it runs on.
 */
import type { DataApiField, TypeHint } from "../../schemas/data-api.js";
import type { Column } from "../../schemas/query.js";
import type { ColumnDetail, StatementResult } from "./statement-result.js";
import type { Segment } from "./sql-segments.js";

/** How a column's values are written: the Field member, or the JSON value for formattedRecords. */
export type FieldKind = "boolean" | "long" | "double" | "decimal" | "string" | "blob" | "timestamp" | "json" | "bits" | "array" | "null";

/** How the values of one result column are written. */
export interface ColumnPlan {
  kind: FieldKind;
  /** For arrays: the kind of the elements. */
  element?: FieldKind;
}

/** The members of a column's `columnMetadata` that depend on the engine's type system. */
export interface ColumnTypeMetadata {
  /** The type's name as the service reports it. */
  typeName: string;
  /** The java.sql.Types code. */
  type: number;
  /** For arrays: the java.sql.Types code of the elements; 0 otherwise. */
  arrayBaseColumnType: number;
  isCaseSensitive: boolean;
  isCurrency: boolean;
  /** The `name` member (the label is always the output name). */
  name: string;
}

export interface DataApiDialect {
  /** The SQL split into code and what is not code (literals, quoted identifiers, comments) by this engine's rules. */
  segments(sql: string): Segment[];
  /**
   * True: a name used twice binds one value under one number (`$1 ... $1`); false: each occurrence
   * is a placeholder of its own and the value is bound again (`? ... ?`).
   */
  readonly repeatedNamesShareAValue: boolean;
  /**
   * The placeholder for the n-th (1-based) bound value. `sqlType` is what `sqlTypeOf` answered for its
   * Field, or undefined where the statement casts the placeholder itself.
   */
  placeholder(n: number, sqlType: string | undefined): string;
  /**
   * The SQL type the service binds a Field with, where this engine takes it from the SQL text (a
   * cast); undefined where the engine infers the type, or where the value carries it (TypedParam).
   */
  sqlTypeOf(value: DataApiField, typeHint: TypeHint | undefined): string | undefined;
  /** How each result column is written; `details` where the caller has them already (else asked for only if needed). */
  columnPlans(result: StatementResult, details?: readonly ColumnDetail[]): ColumnPlan[];
  /** The type-system members of a column's `columnMetadata`. */
  columnType(column: Column, detail: ColumnDetail | undefined, plan: ColumnPlan): ColumnTypeMetadata;
}
