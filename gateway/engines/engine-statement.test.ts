/** The engine's statement: read once by the engine's reader, in one of a fixed set of shared modes. */
import { describe, expect, it } from "vitest";
import { AS_WRITTEN, statementMode, statementOf, withCommitPosition } from "./engine-statement.js";
import { mysqlSqlReader } from "./mysql/sql-reader.js";
import { cachedReader, NOT_UNDERSTOOD, type StatementAnalysis } from "./sql-analysis.js";

describe("statement modes", () => {
  it("answers the same frozen instance for the same fields, and a different one for different fields", () => {
    const modes = new Set<unknown>();
    for (const text of ["as written", "in gateway transaction", "one statement"] as const) {
      for (const readOnlyPrincipal of [false, true]) {
        for (const position of [false, true]) {
          for (const textValues of [false, true]) {
            const mode = statementMode(text, readOnlyPrincipal, position, textValues);
            expect(mode).toEqual({ text, readOnlyPrincipal, withCommitPosition: position, textValues });
            expect(Object.isFrozen(mode)).toBe(true);
            expect(statementMode(text, readOnlyPrincipal, position, textValues)).toBe(mode);
            modes.add(mode);
          }
        }
      }
    }
    expect(modes.size).toBe(24);
    expect(statementMode()).toBe(AS_WRITTEN);
    expect(AS_WRITTEN).toEqual({ text: "as written", readOnlyPrincipal: false, withCommitPosition: false, textValues: false });
  });

  it("asks for a write's commit position keeping the rest of the statement and its mode", () => {
    const reader = mysqlSqlReader();
    const statement = statementOf(reader, "insert into t values (?)", [1], statementMode("in gateway transaction", false, false, true));
    const positioned = withCommitPosition(statement);
    expect(positioned).toEqual({ ...statement, mode: statementMode("in gateway transaction", false, true, true) });
    expect(positioned.analysis).toBe(statement.analysis);
    expect(withCommitPosition(positioned)).toBe(positioned);
  });
});

describe("statementOf", () => {
  it("reads each distinct text once, through the reader's cache", () => {
    const read: string[] = [];
    const analysis: StatementAnalysis = { ...NOT_UNDERSTOOD, understood: true, intent: "read" };
    const reader = cachedReader(
      (sql) => {
        read.push(sql);
        return analysis;
      },
      () => ({ id: "", sample: "" }),
    );
    const first = statementOf(reader, "select 1");
    const second = statementOf(reader, "select 1", [2]);
    expect(read).toEqual(["select 1"]);
    expect(first).toEqual({ sql: "select 1", params: [], analysis, mode: AS_WRITTEN });
    expect(second.analysis).toBe(first.analysis);
    expect(second.params).toEqual([2]);
  });
});
