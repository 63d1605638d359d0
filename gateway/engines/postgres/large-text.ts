/**
 * The careful reading of a PostgreSQL text too large to parse on the event loop (the WebAssembly
 * parser costs about a second per megabyte): PostgreSQL's lexical rules (engines/sql-segments.ts) find
 * the statements and their first keywords, and every answer leans careful. A single statement is sent
 * with the extended protocol, where the server itself refuses a second one, so a wrong count cannot
 * smuggle anything; several statements get the answers of a text the reader does not understand.
 */
import { lexSql } from "../sql-segments.js";
import { NOT_UNDERSTOOD, type StatementAnalysis } from "../sql-analysis.js";

/** Texts above this many characters take the careful reading (about 40 ms of parsing on a fast core). */
export const LARGE_TEXT_CHARACTERS = 32 * 1024;

const TRANSACTION_CONTROL = /^(?:begin|start|commit|end|abort|rollback(?!\s+(?:work\s+|transaction\s+)?to\b)|prepare\s+transaction)\b/;

export function largeTextAnalysis(sql: string): StatementAnalysis {
  const code = lexSql(sql, "postgres")
    .map((segment) => (segment.kind === "code" ? segment.text : " x "))
    .join("");
  const statements = code
    .split(";")
    .map((statement) => statement.trim().toLowerCase().replace(/^\(+\s*/, ""))
    .filter((statement) => statement.length > 0);
  const refusal = `statements over ${LARGE_TEXT_CHARACTERS / 1024} KiB (the gateway reads them only roughly; send large values as parameters)`;
  if (statements.length !== 1) return { ...NOT_UNDERSTOOD, readOnlyRefusal: refusal };
  const [statement] = statements as [string];
  const control = TRANSACTION_CONTROL.test(statement);
  return {
    understood: true,
    statementCount: 1,
    // Reads may call writing functions the rough reading cannot see: large texts run on the primary.
    intent: "write",
    endsTransaction: control,
    transactionControl: control,
    commitsInParts: control,
    readOnlyRefusal: refusal,
    leavesNoState: false,
    functions: [],
    savepointOnly: false,
    tables: undefined,
    knownFunctionsOnly: false,
    deterministic: false,
  };
}
