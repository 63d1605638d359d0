/**
 * Results as PlanetScale's protocol carries them (Vitess's query.QueryResult in protojson): `fields`,
 * and each row as `lengths` (every value's length in bytes, as a decimal string, -1 for NULL) and
 * `values` (all values' bytes one after the other, base64). The values are MySQL's text protocol
 * values, which the MySQL engine hands back for a statement whose mode asks for textValues: text as UTF-8 bytes, the
 * binary character set's values as their bytes. 64-bit counts (rowsAffected, insertId) are strings.
 */
import type { StatementResult } from "../engines/engine.js";
import { planetscaleField } from "./fields.js";

function bytesOf(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (typeof value === "string") return Buffer.from(value, "utf8");
  // Not a text value (the engine's text mode gives none of these today): its JSON text.
  return Buffer.from(typeof value === "number" || typeof value === "bigint" ? String(value) : JSON.stringify(value), "utf8");
}

/** One row: its lengths and its values' bytes as base64. */
export function packedRow(row: readonly unknown[]): { lengths: string[]; values: string } {
  const lengths: string[] = [];
  const parts: Buffer[] = [];
  for (const value of row) {
    if (value === null || value === undefined) {
      lengths.push("-1");
      continue;
    }
    const bytes = bytesOf(value);
    lengths.push(String(bytes.length));
    parts.push(bytes);
  }
  return { lengths, values: Buffer.concat(parts).toString("base64") };
}

/** A statement's `result` object as JSON text. */
export function planetscaleResultJson(result: StatementResult): string {
  const parts: string[] = [];
  if (result.rowCount !== null && result.columns.length === 0) parts.push(`"rowsAffected":"${result.rowCount}"`);
  if (result.lastInsertId !== undefined) parts.push(`"insertId":${JSON.stringify(result.lastInsertId)}`);
  if (result.columns.length > 0) {
    const details = result.describeColumns?.() ?? [];
    const fields = result.columns.map((column, i) => planetscaleField(column, details[i]));
    parts.push(`"fields":${JSON.stringify(fields)}`);
    parts.push(`"rows":${JSON.stringify(result.rows.map(packedRow))}`);
  }
  return `{${parts.join(",")}}`;
}

/** The result of a statement that answers nothing (BEGIN, COMMIT, ROLLBACK). */
export const EMPTY_RESULT_JSON = "{}";
