/** Shapes engine results for the wire: rows as objects keyed by column name, or as arrays. */
import type { QueryResult } from "../../schemas/query.js";
import type { StatementResult } from "../engines/engine.js";

export function shapeResult(result: StatementResult, rowMode: "object" | "array"): QueryResult {
  const { command, columns, rows, rowCount } = result;
  if (rowMode === "array" || columns.length === 0) return { command, columns, rows, rowCount };
  const names = columns.map((column) => column.name);
  // A column named __proto__ must become a property, not the object's prototype.
  const plain = !names.includes("__proto__");
  const objects = new Array<Record<string, unknown>>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as unknown[];
    const object: Record<string, unknown> = plain ? {} : Object.create(null);
    for (let c = 0; c < names.length; c++) object[names[c] as string] = row[c];
    objects[r] = object;
  }
  return { command, columns, rows: objects, rowCount };
}
