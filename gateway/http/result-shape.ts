/**
 * Shapes engine results for the wire: rows as objects keyed by column name (default) or as arrays,
 * serialised straight to the response JSON (the envelope is assembled here so the hot path makes one
 * pass over the rows; column lists of cached statements are serialised once).
 */
import type { StatementResult } from "../engines/engine.js";

const columnsJson = new WeakMap<object, string>();

function rowsAsObjects(result: StatementResult): Record<string, unknown>[] {
  const names = result.columns.map((column) => column.name);
  // A column named __proto__ must become a property, not the object's prototype.
  const plain = !names.includes("__proto__");
  const rows = result.rows;
  const objects = new Array<Record<string, unknown>>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as unknown[];
    const object: Record<string, unknown> = plain ? {} : (Object.create(null) as Record<string, unknown>);
    for (let c = 0; c < names.length; c++) object[names[c] as string] = row[c];
    objects[r] = object;
  }
  return objects;
}

/** The JSON text of a QueryResult, plus `attempts` (and a consistency token) when given. */
export function serializeResult(result: StatementResult, rowMode: "object" | "array", attempts?: number, consistencyToken?: string): string {
  let columns = columnsJson.get(result.columns);
  if (columns === undefined) {
    columns = JSON.stringify(result.columns);
    columnsJson.set(result.columns, columns);
  }
  const rows = JSON.stringify(rowMode === "array" || result.columns.length === 0 ? result.rows : rowsAsObjects(result));
  const token = consistencyToken === undefined ? "" : `,"consistencyToken":${JSON.stringify(consistencyToken)}`;
  const tail = attempts === undefined ? "}" : `,"attempts":${attempts}${token}}`;
  const insertId = result.lastInsertId === undefined ? "" : `,"lastInsertId":${JSON.stringify(result.lastInsertId)}`;
  return `{"command":${JSON.stringify(result.command)},"columns":${columns},"rows":${rows},"rowCount":${result.rowCount}${insertId}${tail}`;
}
