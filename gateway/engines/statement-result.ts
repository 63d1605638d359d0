/**
 * What a statement answers, as every engine hands it to the core: its columns (with details computed
 * only when asked), rows in column order, and what the write left behind. Its own file so that the
 * engine interface (engine.ts) and the Data API dialect (data-api-dialect.ts) both read it without
 * importing each other.
 */
import type { Column } from "../../schemas/query.js";

/** What the engine knows of a result column beyond its name and type (for the Data API's columnMetadata). */
export interface ColumnDetail {
  /** The table the column comes from ("" for expressions or when the engine does not say). */
  table: string;
  /** The column's own name in its table (MySQL), else the output name. */
  originalName: string;
  /** Declared NOT NULL: false; nullable: true; unknown: null. */
  nullable: boolean | null;
  autoIncrement: boolean;
  signed: boolean;
  /** Declared length or precision (MySQL display width, PostgreSQL typmod), 0 when none. */
  precision: number;
  scale: number;
  /** The engine's own identifier of the column's type (PostgreSQL: the type OID; MySQL: the column type byte), where it says. */
  typeId?: number;
  /** MySQL's column definition: its flags (NOT_NULL, UNSIGNED, BINARY...), character set (collation id), source table's own name and database. */
  flags?: number;
  characterSet?: number;
  originalTable?: string;
  schema?: string;
  /** PostgreSQL's row description: the type's size (-1 variable), its modifier (-1 none), the source table's OID and column number (0 for expressions). */
  typeSize?: number;
  typeModifier?: number;
  tableId?: number;
  columnNumber?: number;
}

export interface StatementResult {
  command: string;
  columns: Column[];
  /** Column details, computed only when asked for (most callers never are). */
  describeColumns?: () => ColumnDetail[];
  /** Rows in column order; the HTTP layer shapes them into objects when asked. */
  rows: unknown[][];
  rowCount: number | null;
  /** MySQL: the AUTO_INCREMENT value an INSERT generated (exact, as a string). */
  lastInsertId?: string;
  /** The position read in the write's own round trip (StatementMode.withCommitPosition), where the engine could. */
  commitPosition?: string;
}
