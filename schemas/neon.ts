/**
 * Wire types of Neon's SQL-over-HTTP protocol (`POST /sql`), as `@neondatabase/serverless`'s `neon()`
 * sends and parses them: one query `{query, params}` or a batch `{queries: [...]}` run as one
 * transaction; results `{command, rowCount, fields, rows, rowAsArray}` (a batch: `{results: [...]}`).
 * The driver sends every parameter as PostgreSQL text (or null); numbers and booleans from other
 * clients are bound as their text too.
 */
import { z } from "zod";

export const neonParamSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export type NeonParam = z.infer<typeof neonParamSchema>;

export const neonQuerySchema = z.object({
  query: z.string().min(1).describe("One SQL statement; parameters are $1, $2..."),
  params: z.array(neonParamSchema).max(65535).optional().describe("Values as PostgreSQL text, or null; default []"),
});
export type NeonQuery = z.infer<typeof neonQuerySchema>;

/** One query, or several run in one transaction (the driver's `sql.transaction([...])`). */
export const neonRequestSchema = z.union([
  neonQuerySchema,
  z.object({ queries: z.array(neonQuerySchema).min(1).max(1000).describe("Run in order in one transaction: all or nothing") }),
]);
export type NeonRequest = z.infer<typeof neonRequestSchema>;

/** A result column as `pg`'s FieldDef names it; `dataTypeID` picks the driver's type parser. */
export interface NeonField {
  name: string;
  tableID: number;
  columnID: number;
  dataTypeID: number;
  dataTypeSize: number;
  dataTypeModifier: number;
  format: "text";
}

/** The fields of a PostgreSQL error the driver copies onto its NeonDbError (beside `message`). */
export const NEON_ERROR_FIELDS = ["severity", "code", "detail", "hint", "position", "where", "schema", "table", "column", "dataType", "constraint"] as const;
