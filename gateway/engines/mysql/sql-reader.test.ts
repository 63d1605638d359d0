import { describe, expect, it } from "vitest";
import type { Intent } from "../../../schemas/query.js";
import { mysqlSqlReader } from "./sql-reader.js";

const reader = mysqlSqlReader(["audit_and_return"]);
const analyse = (sql: string) => reader.analyse(sql);

describe("MySQL reader: intent", () => {
  it.each([
    ["select 1", "read"],
    ["select @@port", "read"],
    ["select * from `order` where note = 'a\\'b'", "read"],
    ["select `select` from t", "read"],
    ["show tables", "read"],
    ["describe t", "read"],
    ["with x as (select 1) select * from x", "read"],
    ["(select 1) union (select 2)", "read"],
    ["select * from t lock in share mode", "write"],
    ["select * from t for update", "write"],
    ["select * from t # it's\n for update", "write"],
    ["select * from t -- it's\n for share", "write"],
    ["select get_lock('k', 1)", "write"],
    ["select last_insert_id()", "write"],
    ["select 'x\\'', get_lock('k', 1)", "write"],
    ["select 1 into @x", "write"],
    ["select audit_and_return(1)", "write"],
    ["replace into t values (1)", "write"],
    ["with x as (select 1) update t set a = 1", "write"],
    ["select 1; delete from t", "write"],
    ["select 1 /*!50000 for update */", "write"],
  ] as [string, Intent][])("%j -> %s", (sql, intent) => {
    expect(analyse(sql).intent).toBe(intent);
  });
});

describe("MySQL reader: ending transactions", () => {
  it.each([
    ["commit", true],
    ["begin", true],
    ["begin work", true],
    ["start transaction read only", true],
    ["rollback", true],
    ["rollback to savepoint s", false],
    ["rollback work to s", false],
    ["savepoint s", false],
    ["release savepoint s", false],
    ["xa start 'x'", true],
    ["set autocommit = 0", true],
    ["SET @@session.autocommit = 1", true],
    ["set @x = 1, autocommit = 0", true],
    ["set transaction isolation level serializable", false],
    ["create table t (x int)", true],
    ["CREATE TEMPORARY TABLE t (x int)", false],
    ["create or replace temporary table t (x int)", false],
    ["drop temporary table t", false],
    ["drop table t", true],
    ["alter table t add y int", true],
    ["truncate t", true],
    ["lock tables t write", true],
    ["unlock tables", true],
    ["grant select on t to u", true],
    ["flush tables", true],
    ["begin not atomic select 1; end", true],
    ["frobnicate the database", true], // not recognised: the careful answer
    ["insert into t values (1); drop table t", true],
    ["select 'create table'", false],
    ["insert into t values (1)", false],
    ["call p()", false],
    ["SELECT 1 # don't\n; COMMIT", true],
    ["select 5 --1; commit", true],
    ["select 1 -- x\r; commit", false], // MySQL ends -- comments at a line feed only
    ["select 1 # x\r; commit", false],
    ["select 1 --\t x\n; commit", true],
    ["/*!40101 commit */", true],
    ["/*M! commit */", true],
    ["/*!99999 commit */", true],
    ["select 1 /* ; commit */", false],
    ["select 'a\\'; commit; select '", true], // with NO_BACKSLASH_ESCAPES the COMMIT is code
  ] as [string, boolean][])("%j ends a transaction: %s", (sql, expected) => {
    expect(analyse(sql).endsTransaction).toBe(expected);
  });

  it("runs several statements, or anything that ends a transaction, only once", () => {
    expect(analyse("insert into t values (1); update t set a = 2").commitsInParts).toBe(true);
    expect(analyse("insert into t values (1)").commitsInParts).toBe(false);
    expect(analyse("insert into t values (1); update t set a = 2").statementCount).toBe(2);
  });

  it("takes what any reading of the text says", () => {
    // An executable comment that is code on one server and a comment on another: its string hides */.
    expect(analyse("select 1 /*!50000 'x */ ; commit; -- ' */").endsTransaction).toBe(true);
    // Without backslash escapes the second quote ends the string, and the COMMIT before the failure runs.
    expect(analyse("select 'a\\'; commit; select 'b").endsTransaction).toBe(true);
    expect(analyse("select 'unterminated").understood).toBe(false);
    expect(analyse("select 'unterminated").endsTransaction).toBe(true);
  });
});

describe("MySQL reader: session state", () => {
  it.each([
    "select 1",
    "SELECT * FROM t WHERE id = ?",
    "insert into t values (?, ?)",
    "insert into t (a, b) values (?, ?) on duplicate key update a = values(a)",
    "update t set a = a + 1 where id in (1, 2)",
    "delete from t",
    "replace into t values (1)",
    "with x as (select 1) select * from x",
    "/* note */ select @@read_only",
    "-- hi\nselect 1;",
    "# hi\nselect 1",
    "select count(*), concat(a, b), json_extract(j, '$.x'), cast(x as char(10)) from t join u using (id)",
  ])("keeps %j clean", (sql) => {
    expect(analyse(sql).leavesNoState).toBe(true);
  });

  it("knows SLEEP changes nothing: a read calling it and lost with its session may run again", () => {
    const analysis = analyse("select count(*) as n, @@global.read_only as on_reader, sleep(0.2) as slept from t");
    expect(analysis.intent).toBe("read");
    expect(analysis.knownFunctionsOnly).toBe(true);
    expect(analysis.leavesNoState).toBe(true);
  });

  it.each([
    "set @x = 1",
    "SET time_zone = '+01:00'",
    "set session transaction isolation level serializable",
    "use other",
    "create temporary table t (x int)",
    "lock tables t write",
    "select get_lock('a', 1)",
    "select @x := 1",
    "select @`x`",
    "select 1 into @x",
    "begin",
    "xa start 'a'",
    "prepare s from 'select 1'",
    "select 1; set @x = 2",
    "/*!50000 set @x = 1 */",
    "select my_stored_function(1)",
    "select db.f(1)",
    "call p()",
    "show warnings; set @x = 1",
  ])("flags %j as changing the session", (sql) => {
    expect(analyse(sql).leavesNoState).toBe(false);
  });
});

describe("MySQL reader: what a read-only principal may send", () => {
  it.each([
    ["select * from t", undefined],
    ["show warnings", undefined],
    ["explain select 1", undefined],
    ["savepoint a", undefined],
    ["rollback to a", undefined],
    ["select * from t # set\n", undefined],
    ["/*!50000 set @@session.tx_read_only = 0 */", "SET statements"],
    ["create table t (x int)", "CREATE statements"],
    ["create temporary table t (x int)", "CREATE statements"],
    ["kill 12", "KILL statements"],
    ["kill query 12", "KILL statements"],
    ["call p()", "CALL statements"],
    ["do get_lock('a', 10)", "named locks, waits and server files (GET_LOCK, LOAD_FILE...)"],
    ["do @x := 1", "DO statements"],
    ["do sleep(1)", undefined],
    ["select get_lock('a', 10)", "named locks, waits and server files (GET_LOCK, LOAD_FILE...)"],
    ["select load_file('/etc/passwd')", "named locks, waits and server files (GET_LOCK, LOAD_FILE...)"],
    ["select 1 into @x", "SELECT statements"],
    ["select * from t for update", "SELECT statements"],
    ["lock tables t read", "LOCK statements"],
    ["handler t open", "HANDLER statements"],
    ["commit", "COMMIT statements"],
  ] as [string, string | undefined][])("%j is refused for: %s", (sql, reason) => {
    expect(analyse(sql).readOnlyRefusal).toBe(reason);
  });
});

describe("MySQL reader: a transaction's own control statement", () => {
  it.each([
    ["BEGIN", { verb: "begin", readOnly: false }],
    ["begin work;", { verb: "begin", readOnly: false }],
    ["START TRANSACTION", { verb: "begin", readOnly: false }],
    ["start transaction read only", { verb: "begin", readOnly: true }],
    ["START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY", { verb: "begin", readOnly: true }],
    ["start transaction read write", { verb: "begin", readOnly: false }],
    ["/* drizzle */ COMMIT", { verb: "commit" }],
    ["commit work", { verb: "commit" }],
    ["ROLLBACK", { verb: "rollback" }],
    ["rollback work", { verb: "rollback" }],
  ])("%s is %j", (sql, statement) => {
    expect(analyse(sql).transactionStatement).toEqual(statement);
  });

  it.each([
    "commit and chain",
    "commit release",
    "rollback to savepoint s",
    "rollback work to s",
    "begin not atomic select 1; end",
    "start transaction read sideways",
    "begin; select 1",
    "commit; commit",
    "select 'commit'",
    "set autocommit = 0",
    "xa start 'x'",
  ])("%s is none", (sql) => {
    expect(analyse(sql).transactionStatement).toBeUndefined();
  });
});
