/** SQL that ends a gateway transaction, and text the reader cannot read, under each surface's transactionEnds. */
import { describe, expect, it } from "vitest";
import { systemClock } from "../clock.js";
import { parseConfig } from "../config/load.js";
import { mysqlSqlReader } from "../engines/mysql/sql-reader.js";
import { postgresSqlReader } from "../engines/postgres/sql-reader.js";
import type { SqlReader } from "../engines/sql-analysis.js";
import { NATIVE_SURFACE, Planner, type SurfacePolicy, type WorkRequest } from "./plan.js";
import { UNRESTRICTED } from "./run-as.js";

const config = parseConfig({ clusters: { default: { writerUrl: "postgres://u:p@127.0.0.1:5432/db" } } }, "test");
const DATA_API: SurfacePolicy = { transactionEnds: "continue" };

const READERS: [engine: string, reader: SqlReader, unreadable: string][] = [
  ["postgres", postgresSqlReader([]), "selec 1"],
  ["mysql", mysqlSqlReader(), "select 'unterminated"],
];

describe.each(READERS)("planning transaction control on %s", (_engine, reader, unreadable) => {
  const planner = new Planner(config, reader, () => true, systemClock, "default");
  const plan = (sql: string, scope: WorkRequest["scope"], surface: SurfacePolicy) => planner.plan({ statements: [{ sql }], scope }, surface, UNRESTRICTED);

  it("refuses COMMIT and unreadable text in the native API's transactions and batches", () => {
    for (const scope of ["transaction", "batch"] as const) {
      expect(() => plan("commit", scope, NATIVE_SURFACE), scope).toThrow(/transaction control/);
      expect(() => plan(unreadable, scope, NATIVE_SURFACE), scope).toThrow(/cannot read/);
    }
  });

  it("runs COMMIT and ROLLBACK in a Data API transaction, and refuses them in a Data API batch", () => {
    for (const sql of ["commit", "ROLLBACK", "begin"]) {
      expect(plan(sql, "transaction", DATA_API).transactionEnds).toBe("continue");
      expect(() => plan(sql, "batch", DATA_API), sql).toThrow(/transaction control/);
    }
  });

  it("sends unreadable text to the database from Data API transactions and batches, as exactly one statement", () => {
    for (const scope of ["transaction", "batch"] as const) {
      expect(plan(unreadable, scope, DATA_API).statements[0]?.mode.text, scope).toBe("one statement");
    }
    expect(plan("select 1", "transaction", DATA_API).statements[0]?.mode.text).toBe("in gateway transaction");
  });
});
