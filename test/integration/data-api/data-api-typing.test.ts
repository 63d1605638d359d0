/**
 * Data API parameters are typed as the service types them (longValue BIGINT, doubleValue DOUBLE,
 * booleanValue BOOLEAN, stringValue text unless a typeHint says otherwise): one table of statements
 * with the service's answers (../shared/reference/data-api.md §4, §8.5), run through the unmodified
 * AWS SDK client on PostgreSQL and MariaDB.
 */
import { ExecuteStatementCommand, type Field, type RDSDataClient, type SqlParameter } from "@aws-sdk/client-rds-data";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase } from "../../support/mysql.js";
import { createTestDatabase } from "../../support/postgres.js";
import { dataApiClient, RESOURCE_ARN, SECRET_ARN } from "./data-api-suite.js";

/** What the service answers: the one value and its column's typeName, or the database error. */
type Answer = { value: Field; typeName: string } | { error: RegExp };

interface TypingCase {
  what: string;
  sql: string;
  parameters: SqlParameter[];
  postgres: Answer;
  mysql: Answer;
}

const long = (name: string, value: number): SqlParameter => ({ name, value: { longValue: value } });
const text = (name: string, value: string): SqlParameter => ({ name, value: { stringValue: value } });

const CASES: TypingCase[] = [
  {
    what: "a doubleValue is a DOUBLE: 1.5 * 2",
    sql: "select :f * 2 as v",
    parameters: [{ name: "f", value: { doubleValue: 1.5 } }],
    postgres: { value: { doubleValue: 3 }, typeName: "float8" },
    mysql: { value: { doubleValue: 3 }, typeName: "DOUBLE" },
  },
  {
    what: "an integral doubleValue stays a DOUBLE",
    sql: "select :f as v",
    parameters: [{ name: "f", value: { doubleValue: 2 } }],
    postgres: { value: { doubleValue: 2 }, typeName: "float8" },
    mysql: { value: { doubleValue: 2 }, typeName: "DOUBLE" },
  },
  {
    what: "two longValues add as BIGINTs",
    sql: "select :a + :b as v",
    parameters: [long("a", 1), long("b", 2)],
    postgres: { value: { longValue: 3 }, typeName: "int8" },
    mysql: { value: { longValue: 3 }, typeName: "BIGINT" },
  },
  {
    what: "two stringValues concatenate as text",
    sql: "select concat(:a, :b) as v",
    parameters: [text("a", "x"), text("b", "y")],
    postgres: { value: { stringValue: "xy" }, typeName: "text" },
    mysql: { value: { stringValue: "xy" }, typeName: "VARCHAR" },
  },
  {
    what: "a longValue selected alone is a BIGINT",
    sql: "select :n as v",
    parameters: [long("n", 7)],
    postgres: { value: { longValue: 7 }, typeName: "int8" },
    mysql: { value: { longValue: 7 }, typeName: "BIGINT" },
  },
  {
    what: "substring's position as a BIGINT: PostgreSQL has no such overload (never a silent NULL)",
    sql: "select substring('abcdef', :n) as v",
    parameters: [long("n", 2)],
    postgres: { error: /^ERROR: function substring\(unknown, bigint\) does not exist;.*SQLState: 42883$/ },
    mysql: { value: { stringValue: "bcdef" }, typeName: "VARCHAR" },
  },
  {
    what: "a stringValue compared with an integer is text (the service's live answer on PostgreSQL)",
    sql: "select 1 as v where 1 = :s",
    parameters: [text("s", "1")],
    postgres: { error: /^ERROR: operator does not exist: integer = text;.*SQLState: 42883$/ },
    mysql: { value: { longValue: 1 }, typeName: "INT" },
  },
  {
    what: "a booleanValue is a BOOLEAN",
    sql: "select not :b as v",
    parameters: [{ name: "b", value: { booleanValue: false } }],
    postgres: { value: { booleanValue: true }, typeName: "bool" },
    mysql: { value: { longValue: 1 }, typeName: "INT" },
  },
  {
    what: "a typeHint DATE makes the stringValue a date (MySQL: a string it converts where a date is needed)",
    sql: "select :d as v",
    parameters: [{ name: "d", value: { stringValue: "2024-02-28" }, typeHint: "DATE" }],
    postgres: { value: { stringValue: "2024-02-28" }, typeName: "date" },
    mysql: { value: { stringValue: "2024-02-28" }, typeName: "VARCHAR" },
  },
];

for (const engine of ["postgres", "mysql"] as const) {
  describe(`Data API parameter types on ${engine}`, () => {
    let gw: TestGateway;
    let client: RDSDataClient;
    let drop: () => Promise<void>;

    beforeAll(async () => {
      const db = engine === "postgres" ? await createTestDatabase() : await createTestMysqlDatabase();
      drop = () => db.drop();
      gw = await startTestGateway({ clusters: { default: { writerUrl: db.url } } });
      client = dataApiClient(gw.baseUrl);
    });

    afterAll(async () => {
      client?.destroy();
      await gw?.stop();
      await drop?.();
    });

    it.each(CASES.map((c) => [c.what, c] as const))("%s", async (_what, c) => {
      const expected = c[engine];
      const run = client.send(new ExecuteStatementCommand({ resourceArn: RESOURCE_ARN, secretArn: SECRET_ARN, sql: c.sql, parameters: c.parameters, includeResultMetadata: true }));
      if ("error" in expected) {
        const err = (await run.then(
          () => undefined,
          (e: unknown) => e,
        )) as { name?: string; message?: string } | undefined;
        expect(err?.name).toBe("DatabaseErrorException");
        expect(err?.message).toMatch(expected.error);
        return;
      }
      const answer = await run;
      // The case's first column: the answers of cases with a WHERE clause sit in the first record too.
      expect({ value: answer.records?.[0]?.[0], typeName: answer.columnMetadata?.[0]?.typeName }).toEqual(expected);
    });
  });
}
