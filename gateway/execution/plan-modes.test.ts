/** The mode the planner gives each statement: how the engine sends it, for whom, and how values come back. */
import { describe, expect, it } from "vitest";
import { systemClock } from "../clock.js";
import { parseConfig } from "../config/load.js";
import { AS_WRITTEN, type StatementMode } from "../engines/engine-statement.js";
import { mysqlSqlReader } from "../engines/mysql/sql-reader.js";
import { postgresSqlReader } from "../engines/postgres/sql-reader.js";
import type { SqlReader } from "../engines/sql-analysis.js";
import { NATIVE_SURFACE, Planner, type WorkRequest } from "./plan.js";
import { type RunAs, UNRESTRICTED } from "./run-as.js";

const config = parseConfig({ clusters: { default: { writerUrl: "postgres://u:p@127.0.0.1:5432/db" } } }, "test");
const READ_ONLY: RunAs = Object.freeze({ ...UNRESTRICTED, readOnly: true });

const READERS: [engine: string, reader: SqlReader, unreadable: string][] = [
  ["postgres", postgresSqlReader([]), "selec 1"],
  ["mysql", mysqlSqlReader(), "select 'unterminated"],
];

describe.each(READERS)("the planner's statement modes on %s", (_engine, reader, unreadable) => {
  const planner = new Planner(config, reader, () => true, systemClock, "default");
  const modesOf = (request: WorkRequest, runAs: RunAs = UNRESTRICTED): StatementMode[] =>
    planner.plan(request, { transactionEnds: "continue" }, runAs).statements.map((statement) => statement.mode);

  it("sends an autocommit statement as written, in the one shared mode (planning it allocates no mode)", () => {
    const [mode] = modesOf({ statements: [{ sql: "select 1" }], scope: "statement" });
    expect(mode).toBe(AS_WRITTEN);
    expect(mode).toEqual({ text: "as written", readOnlyPrincipal: false, withCommitPosition: false, textValues: false });
    expect(Object.isFrozen(mode)).toBe(true);
  });

  it("keeps the reader's analysis of each statement with it, for the engine", () => {
    const plan = planner.plan({ statements: [{ sql: "select 1" }, { sql: "insert into t values (1)" }], scope: "batch" }, NATIVE_SURFACE, UNRESTRICTED);
    expect(plan.statements.map(({ analysis }) => analysis.intent)).toEqual(["read", "write"]);
    expect(plan.statements[0]?.analysis).toBe(reader.analyse("select 1"));
  });

  it("runs a batch's, an interactive transaction's and a keyed write's statements in the gateway's transaction", () => {
    const batch = modesOf({ statements: [{ sql: "select 1" }, { sql: "select 2" }], scope: "batch" });
    expect(batch.map((mode) => mode.text)).toEqual(["in gateway transaction", "in gateway transaction"]);
    expect(batch[0]).toBe(batch[1]);
    expect(modesOf({ statements: [{ sql: "select 1" }], scope: "transaction" })[0]?.text).toBe("in gateway transaction");
    const keyed = modesOf({ statements: [{ sql: "insert into t values (1)" }], scope: "statement", idempotency: { key: "k", surface: "native", answer: () => "{}" } });
    expect(keyed[0]?.text).toBe("in gateway transaction");
  });

  it("sends text the reader cannot read in a gateway transaction as exactly one statement", () => {
    const modes = modesOf({ statements: [{ sql: "select 1" }, { sql: unreadable }], scope: "batch" });
    expect(modes.map((mode) => mode.text)).toEqual(["one statement", "one statement"]);
    expect(modesOf({ statements: [{ sql: unreadable }], scope: "statement" })[0]?.text).toBe("as written");
  });

  it("sends a read-only principal's statements as exactly one statement each, marked as its", () => {
    for (const scope of ["statement", "batch", "transaction"] as const) {
      const [mode] = modesOf({ statements: [{ sql: "select 1" }], scope }, READ_ONLY);
      expect(mode, scope).toMatchObject({ text: "one statement", readOnlyPrincipal: true, withCommitPosition: false });
    }
  });

  it("asks for values as the database printed them where the surface does, and leaves the commit position to the executor", () => {
    const [mode] = modesOf({ statements: [{ sql: "select 1" }], scope: "statement", textValues: true });
    expect(mode).toEqual({ text: "as written", readOnlyPrincipal: false, withCommitPosition: false, textValues: true });
    expect(planner.plan({ statements: [{ sql: "select 1" }], scope: "statement", textValues: true }, NATIVE_SURFACE, UNRESTRICTED).options).not.toHaveProperty("textValues");
  });
});
