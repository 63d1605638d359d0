/**
 * Results as Neon's protocol answers them: `{command, rowCount, fields, rows, rowAsArray}`, fields
 * with the row description's type OIDs (the driver picks its type parser by `dataTypeID`), rows as
 * arrays or objects. A batch's answer is `{results: [...]}`, one result per query.
 */
import type { NeonField } from "../../schemas/neon.js";
import type { StatementResult } from "../engines/engine.js";
import { rowSerializer } from "../results/result-shape.js";

function fieldsOf(result: StatementResult): NeonField[] {
  const details = result.describeColumns?.() ?? [];
  return result.columns.map((column, i) => {
    const detail = details[i];
    return {
      name: column.name,
      tableID: detail?.tableId ?? 0,
      columnID: detail?.columnNumber ?? 0,
      // 25 (text) when the engine gave no OID: the driver then hands the value on as it is.
      dataTypeID: detail?.typeId ?? 25,
      dataTypeSize: detail?.typeSize ?? -1,
      dataTypeModifier: detail?.typeModifier ?? -1,
      format: "text",
    };
  });
}

/** One result's JSON text. */
export function neonResultJson(result: StatementResult, arrayMode: boolean): string {
  const toJson = rowSerializer(result.columns, arrayMode ? "array" : "object");
  const rows = `[${result.rows.map((row) => toJson(row)).join(",")}]`;
  return `{"command":${JSON.stringify(result.command)},"rowCount":${JSON.stringify(result.rowCount)},"fields":${JSON.stringify(fieldsOf(result))},"rows":${rows},"rowAsArray":${arrayMode}}`;
}

/** A batch's JSON text: every query's result, in order. */
export function neonBatchJson(results: readonly StatementResult[], arrayMode: boolean): string {
  return `{"results":[${results.map((result) => neonResultJson(result, arrayMode)).join(",")}]}`;
}
