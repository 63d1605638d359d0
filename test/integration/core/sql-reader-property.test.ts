/**
 * The SQL readers against the databases themselves: fast-check builds texts out of statements that
 * commit, write or change a setting, hidden (or not) in every spelling the dialects allow — comments
 * closed by \r, \n or \r\n, nested block comments, dollar quotes, U& identifiers, E'' strings, MySQL's
 * #, "-- " and executable comments, backslash escapes — and runs each inside a transaction on the real
 * server. Whatever the server did, the reader must have said so: a text that ended the transaction
 * ends transactions, one that wrote is a write, one that changed a setting leaves state (on
 * PostgreSQL together with pg_proc's volatility of what it calls, as the connection checks it).
 */
import fc from "fast-check";
import type mysql from "mysql2/promise";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mysqlSqlReader } from "../../../gateway/engines/mysql/sql-reader.js";
import { FunctionVolatility, VOLATILITY_SQL } from "../../../gateway/engines/postgres/function-volatility.js";
import { postgresSqlReader } from "../../../gateway/engines/postgres/sql-reader.js";
import { createTestMysqlDatabase, type TestMysqlDatabase } from "../../support/mysql.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

const SEED = 20_261_124;
const RUNS = 400;

/** Joins pieces into one text with the separators a statement list can have. */
function texts(piece: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.array(fc.tuple(piece, fc.constantFrom(";", "; ", " ", "\n", ";\r\n", "")), { minLength: 1, maxLength: 4 }).map((parts) => parts.map(([text, separator]) => text + separator).join(""));
}

const POSTGRES_EFFECTS = ["commit", "rollback", "end", "insert into probe values (1)", "set application_name = 'pwned'", "select set_config('application_name', 'pwned', false)"];
const POSTGRES_HARMLESS = ["select 1", "select 'a'", "select $$x$$", "select E'\\''", 'select U&"\\0061" from (select 1 as a) s', "values (1)", "select 1 as commit"];

function postgresPiece(): fc.Arbitrary<string> {
  const plain = fc.constantFrom(...POSTGRES_EFFECTS, ...POSTGRES_HARMLESS);
  return fc.oneof(
    plain,
    fc.tuple(fc.constantFrom("\r", "\n", "\r\n", " "), plain).map(([end, text]) => `-- note${end}${text}`),
    plain.map((text) => `/* ${text} */`),
    fc.tuple(plain, plain).map(([a, b]) => `/* a /* ${a} */ ${b} */`),
    plain.map((text) => `select '${text.replace(/'/g, "''")}'`),
    plain.map((text) => `select E'\\'; ${text.replace(/'/g, "\\'")}'`),
    plain.map((text) => `select $t$${text}$t$`),
    plain.map((text) => `select 1 as "${text.replace(/"/g, '""')}"`),
    plain.map((text) => `select 1 as U&"${text.replace(/"/g, '""').replace(/\\/g, "\\\\")}"`),
  );
}

const MYSQL_EFFECTS = ["commit", "rollback", "insert into probe values (1)", "set time_zone = '+05:00'", "create table made (x int)", "begin"];
const MYSQL_HARMLESS = ["select 1", "select 'a'", "select \"b\"", "select 'it\\'s'", "select 'it''s'", "select `x` from (select 1 as x) s"];

function mysqlPiece(): fc.Arbitrary<string> {
  const plain = fc.constantFrom(...MYSQL_EFFECTS, ...MYSQL_HARMLESS);
  return fc.oneof(
    plain,
    fc.tuple(fc.constantFrom("# ", "-- ", "--\t", "--", "-- x"), fc.constantFrom("\r", "\n", "\r\n"), plain).map(([start, end, text]) => `select 1 ${start}note${end}${text}`),
    fc.tuple(fc.constantFrom("--1", "---1", "--\u00a0"), plain).map(([dashes, text]) => `select 5 ${dashes}; ${text}`),
    plain.map((text) => `/* ${text} */`),
    plain.map((text) => `/*! ${text} */`),
    plain.map((text) => `/*!99999 ${text} */`),
    plain.map((text) => `/*M! ${text} */`),
    plain.map((text) => `select '${text.replace(/'/g, "\\'")}'`),
    plain.map((text) => `select 'a\\'; ${text}; -- '`),
    plain.map((text) => `select "x\\"; ${text}; -- "`),
    plain.map((text) => `select 1 as \`${text.replace(/`/g, "``")}\``),
  );
}

describe("the PostgreSQL reader agrees with PostgreSQL", () => {
  let db: TestDatabase;
  const reader = postgresSqlReader();

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.admin.query("create table probe (x int)");
  });

  afterAll(async () => {
    await db?.drop();
  });

  it("on transaction control, writes and settings, in every spelling", async () => {
    const client = db.admin as pg.Client & { getTransactionStatus(): string | null };
    const setting = async () => (await client.query<{ v: string }>("select current_setting('application_name') as v")).rows[0]?.v;
    const before = await setting();
    const volatility = new FunctionVolatility();
    let ran = 0;
    await fc.assert(
      fc.asyncProperty(texts(postgresPiece()), async (text) => {
        const analysis = reader.analyse(text);
        // A run that failed part-way (while fast-check shrinks) may have left a transaction open.
        if (client.getTransactionStatus() !== "I") await client.query("rollback");
        const unknown = volatility.unknown(analysis.functions);
        if (unknown.length > 0) volatility.record(unknown, (await client.query({ text: VOLATILITY_SQL, values: [unknown], rowMode: "array" })).rows);
        await client.query("begin");
        const failed = await client.query(text).then(
          () => false,
          () => true,
        );
        // pg rejects at the error, before the server's ReadyForQuery: an empty query (allowed even in a
        // failed transaction) makes the status current.
        await client.query("");
        const status = client.getTransactionStatus();
        let wroteInside = false;
        let changedSetting = false;
        if (status === "T") {
          wroteInside = Number((await client.query<{ n: string }>("select count(*) as n from probe")).rows[0]?.n) > 0;
          changedSetting = (await setting()) !== before;
        }
        if (status !== "I") await client.query("rollback");
        const committed = Number((await client.query<{ n: string }>("select count(*) as n from probe")).rows[0]?.n) > 0;
        changedSetting ||= (await setting()) !== before;
        await client.query("delete from probe");
        await client.query("reset all");
        if (!failed) ran++;
        if (status === "I" || committed) expect(analysis.endsTransaction, text).toBe(true);
        if (wroteInside || committed) expect(analysis.intent, text).toBe("write");
        if (changedSetting) expect(analysis.leavesNoState && volatility.allStateless(analysis.functions), text).toBe(false);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // The generator must reach the server with runnable texts, not only syntax errors.
    expect(ran).toBeGreaterThan(RUNS / 10);
  });
});

describe("the MySQL reader agrees with MariaDB", () => {
  let db: TestMysqlDatabase;
  const reader = mysqlSqlReader();

  beforeAll(async () => {
    db = await createTestMysqlDatabase();
    await db.query("create table probe (x int)");
  });

  afterAll(async () => {
    await db?.drop();
  });

  it("on transaction control, implicit commits, writes and settings, in every spelling", async () => {
    const session: mysql.Connection = db.admin;
    await session.query(`use \`${db.name}\``);
    const first = async (sql: string) => ((await session.query(sql)) as unknown as [Record<string, unknown>[]])[0][0] ?? {};
    let ran = 0;
    await fc.assert(
      fc.asyncProperty(texts(mysqlPiece()), async (text) => {
        const analysis = reader.analyse(text);
        await session.query("rollback");
        await session.query("set time_zone = '+00:00'");
        await session.query("start transaction");
        const failed = await session.query(text).then(
          () => false,
          () => true,
        );
        const inTransaction = Number((await first("select @@in_transaction as t")).t) === 1;
        const wroteInside = Number((await first("select count(*) as n from probe")).n) > 0;
        const changedSetting = (await first("select @@session.time_zone as z")).z !== "+00:00";
        await session.query("rollback");
        const committed = Number((await first("select count(*) as n from probe")).n) > 0;
        const made = Number((await first(`select count(*) as n from information_schema.tables where table_schema = '${db.name}' and table_name = 'made'`)).n) > 0;
        await session.query("delete from probe");
        await session.query("drop table if exists made");
        if (!failed) ran++;
        if (!inTransaction || committed || made) expect(analysis.endsTransaction, text).toBe(true);
        if (wroteInside || committed || made) expect(analysis.intent, text).toBe("write");
        if (changedSetting) expect(analysis.leavesNoState, text).toBe(false);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(ran).toBeGreaterThan(RUNS / 10);
  });
});
