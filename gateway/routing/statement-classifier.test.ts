import { describe, expect, it } from "vitest";
import { blankLiteralsAndComments, containsTransactionControl, type Intent, StatementClassifier } from "./statement-classifier.js";

const classifier = new StatementClassifier({ writingFunctions: ["audit_and_return"] });

const table: [string, Intent][] = [
  ["select 1", "read"],
  ["SELECT * FROM accounts WHERE id = $1", "read"],
  ["  -- leading comment\n select now()", "read"],
  ["/* hint */ select 1", "read"],
  ["(select 1) union all (select 2)", "read"],
  ["values (1), (2)", "read"],
  ["table accounts", "read"],
  ["show transaction_isolation", "read"],
  ["with recent as (select * from t where at > now() - interval '1 day') select count(*) from recent", "read"],
  ["explain select * from t", "read"],
  ["select 'insert into t values (1)' as text_that_looks_like_a_write", "read"],
  ['select "update" from t', "read"],
  ["select $$ for update $$", "read"],
  ["select 1;", "read"],
  ["select * from t for update", "write"],
  ["select * from t for no key update skip locked", "write"],
  ["select * from t for share", "write"],
  ["select * from t for key share nowait", "write"],
  ["with moved as (delete from queue returning *) select * from moved", "write"],
  ["with x as (update t set a = 1 returning *) select * from x", "write"],
  ["select nextval('seq')", "write"],
  ["select setval('seq', 10)", "write"],
  ["select pg_advisory_lock(1)", "write"],
  ["select pg_try_advisory_xact_lock(1)", "write"],
  ["select txid_current()", "write"],
  ["select set_config('a.b', 'c', false)", "write"],
  ["select audit_and_return(1)", "write"],
  ["select * into archive from t", "write"],
  ["explain analyze delete from t", "write"],
  ["explain (analyze, buffers) select 1", "read"],
  ["explain (analyze) insert into t values (1)", "write"],
  ["insert into t values (1)", "write"],
  ["update t set a = 1", "write"],
  ["delete from t", "write"],
  ["merge into t using s on t.id = s.id when matched then do nothing", "write"],
  ["create table t (x int)", "write"],
  ["begin", "write"],
  ["set search_path = x", "write"],
  ["call do_things()", "write"],
  ["do $$ begin perform 1; end $$", "write"],
  ["select 1; delete from t", "write"],
  ["lock table t", "write"],
  ["refresh materialized view v", "write"],
  ["copy t to stdout", "write"],
];

describe("statement classifier", () => {
  it.each(table)("%s -> %s", (sql, intent) => {
    expect(classifier.infer(sql)).toBe(intent);
  });

  it("blanks literals, quoted identifiers, dollar quotes and comments", () => {
    expect(blankLiteralsAndComments("select 'it''s' , \"we\"\"ird\", $f$ body $f$ -- c\n/* d */ x")).toBe("select '' , \"x\", ''  \n  x");
  });
});

describe("transaction control detection", () => {
  it.each([
    ["commit", true],
    ["insert into t values (1); COMMIT; update t set a = 2", true],
    ["begin; select 1", true],
    ["start transaction read only", true],
    ["rollback to savepoint s", false],
    ["savepoint s", false],
    ["release savepoint s", false],
    ["rollback", true],
    ["rollback and chain", true],
    ["xa start 'x'", true],
    ["set autocommit = 0", true],
    ["SET @@session.autocommit = 1", true],
    ["end", true],
    ["select 'commit'", false],
    ["select 1 -- commit", false],
    ["insert into t values (1); insert into t values (2)", false],
    ["select committed from t", false],
  ] as [string, boolean][])("%s -> %s", (sql, expected) => {
    expect(containsTransactionControl(sql)).toBe(expected);
  });
});

describe("MySQL statements", () => {
  const mysql = new StatementClassifier({ dialect: "mysql" });

  it.each([
    ["select @@port", "read"],
    ["select * from `order` where note = 'a\\'b'", "read"],
    ["select * from t lock in share mode", "write"],
    ["select get_lock('k', 1)", "write"],
    ["select last_insert_id()", "write"],
    ["select 'x\\'', get_lock('k', 1)", "write"],
    ["select 1 into @x", "write"],
    ["select `select` from t", "read"],
    ["replace into t values (1)", "write"],
  ] as [string, "read" | "write"][])("%s -> %s", (sql, intent) => {
    expect(mysql.infer(sql)).toBe(intent);
  });

  it("blanks backslash-escaped literals and backtick identifiers", () => {
    expect(blankLiteralsAndComments("select 'it\\'s', `we``ird` from t", true)).toBe("select '', `x` from t");
  });

  it.each([
    ["create table t (x int)", true],
    ["CREATE TEMPORARY TABLE t (x int)", false],
    ["drop temporary table t", false],
    ["alter table t add y int", true],
    ["truncate t", true],
    ["lock tables t write", true],
    ["insert into t values (1); drop table t", true],
    ["select 'create table'", false],
    ["insert into t values (1)", false],
  ] as [string, boolean][])("on MySQL, %s ends a transaction: %s", (sql, expected) => {
    expect(mysql.endsTransaction(sql)).toBe(expected);
    expect(new StatementClassifier().endsTransaction(sql)).toBe(false);
  });

  it("follows MySQL's comment rules: #, '-- ' with a space, and /*! */ as code", () => {
    expect(mysql.endsTransaction("SELECT 1 # don't\n; COMMIT")).toBe(true);
    expect(mysql.infer("select * from t # it's\n for update")).toBe("write");
    expect(mysql.endsTransaction("select 5 --1; commit")).toBe(true);
    expect(mysql.endsTransaction("/*!40101 commit */")).toBe(true);
    expect(mysql.commitsInParts("insert into t values (1); update t set a = 2")).toBe(true);
    expect(new StatementClassifier().commitsInParts("insert into t values (1); update t set a = 2")).toBe(false);
  });

  it("reads PostgreSQL escape strings and numbered dollar tags as literals", () => {
    expect(new StatementClassifier().infer("select E'it\\'s; delete from t'")).toBe("read");
    expect(new StatementClassifier().infer("select $fn1$ ; delete from t $fn1$")).toBe("read");
  });

  it("finds transaction control hidden from one reading of the literals", () => {
    expect(containsTransactionControl("select 'a\\'; commit; select '")).toBe(true);
  });

  it.each([
    ["select * from t", undefined],
    ["select set_config('a', 'b', false)", undefined],
    ["select 'set x = 1; do'", undefined],
    ["set transaction read write", "SET, RESET and DO"],
    ["  SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE", "SET, RESET and DO"],
    ["reset transaction_read_only", "SET, RESET and DO"],
    ["do $$ begin insert into t values (1); end $$", "transaction control and statements that commit implicitly"],
    ["do 'begin insert into t values (1); end'", "SET, RESET and DO"],
    ["select 1; set local x = 1", "SET, RESET and DO"],
    ["commit", "transaction control and statements that commit implicitly"],
    ["/* hi */ begin", "transaction control and statements that commit implicitly"],
  ] as [string, string | undefined][])("for a read-only principal, %s is refused for: %s", (sql, reason) => {
    expect(new StatementClassifier().refusedForReadOnly(sql)).toBe(reason);
  });

  it("refuses a read-only principal MySQL's access-mode changes, even inside executable comments, and implicit commits", () => {
    const mysql = new StatementClassifier({ dialect: "mysql" });
    expect(mysql.refusedForReadOnly("/*!50000 set @@session.tx_read_only = 0 */")).toBe("SET, RESET and DO");
    expect(mysql.refusedForReadOnly("create table t (x int)")).toBe("transaction control and statements that commit implicitly");
    expect(mysql.refusedForReadOnly("create temporary table t (x int)")).toBeUndefined();
    expect(mysql.refusedForReadOnly("select * from t # set\n")).toBeUndefined();
  });
});
