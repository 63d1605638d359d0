import { describe, expect, it } from "vitest";
import { StatementQuery } from "./statement-query.js";

const make = (limits = { maxBytes: 100, maxRows: 3 }) =>
  new StatementQuery(
    "select",
    undefined,
    undefined,
    (fields) => fields.map(() => (text: string) => text.toUpperCase()),
    "string",
    limits,
    () => {},
  );

describe("statement query", () => {
  it.each([
    ["SELECT 3", "SELECT", 3],
    ["INSERT 0 2", "INSERT", 2],
    ["UPDATE 0", "UPDATE", 0],
    ["CREATE TABLE", "CREATE TABLE", null],
    ["BEGIN", "BEGIN", null],
  ])("reads the command tag %s", (tag, command, rowCount) => {
    const query = make();
    query.handleCommandComplete({ text: tag });
    expect(query.command).toBe(command);
    expect(query.rowCount).toBe(rowCount);
  });

  it("parses rows with the field parsers and keeps NULL as null", () => {
    const query = make();
    query.handleRowDescription({
      fields: [
        { name: "a", dataTypeID: 25 },
        { name: "b", dataTypeID: 25 },
      ],
    });
    query.handleDataRow({ fields: ["x", null] });
    expect(query.rows).toEqual([["X", null]]);
  });

  it("stops keeping rows once past the row or byte bound", () => {
    const byRows = make();
    byRows.handleRowDescription({ fields: [{ name: "a", dataTypeID: 25 }] });
    for (let i = 0; i < 5; i++) byRows.handleDataRow({ fields: ["x"] });
    expect(byRows.budget.overLimit).toBe(true);
    expect(byRows.rows).toEqual([]);
    const byBytes = make({ maxBytes: 10, maxRows: 100 });
    byBytes.handleRowDescription({ fields: [{ name: "a", dataTypeID: 25 }] });
    byBytes.handleDataRow({ fields: ["0123456789ab"] });
    expect(byBytes.budget.overLimit).toBe(true);
  });

  it("reports a row that fails to parse when the statement ends, once", () => {
    const errors: (Error | null)[] = [];
    const query = new StatementQuery(
      "select",
      undefined,
      undefined,
      (fields) => fields.map(() => JSON.parse),
      "string",
      { maxBytes: 100, maxRows: 10 },
      (err) => errors.push(err),
    );
    query.handleRowDescription({ fields: [{ name: "j", dataTypeID: 114 }] });
    query.handleDataRow({ fields: ["{not json"] });
    query.handleReadyForQuery();
    query.handleReadyForQuery();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SyntaxError);
  });
});
