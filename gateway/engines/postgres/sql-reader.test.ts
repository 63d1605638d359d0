import { describe, expect, it } from "vitest";
import type { Intent } from "../../../schemas/query.js";
import { postgresSqlReader } from "./sql-reader.js";

const reader = postgresSqlReader(["audit_and_return"]);
const analyse = (sql: string) => reader.analyse(sql);

describe("PostgreSQL reader: intent", () => {
  it.each([
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
    ["explain delete from t", "read"],
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
    ["select pg_catalog.setval('seq', 10)", "write"],
    ["select pg_advisory_lock(1)", "write"],
    ["select txid_current()", "write"],
    ["select set_config('a.b', 'c', false)", "write"],
    ['select U&"set\\005fconfig"(\'a.b\', \'c\', false)', "write"],
    ["select audit_and_return(1)", "write"],
    ["select * into archive from t", "write"],
    ["explain analyze delete from t", "write"],
    ["explain (analyze, buffers) select 1", "read"],
    ["explain (analyze false) delete from t", "read"],
    ["explain (analyze off) delete from t", "read"],
    ["explain (analyze 1) delete from t", "write"],
    ["explain (analyze 'tru') delete from t", "write"],
    ["explain (analyze) insert into t values (1)", "write"],
    ["insert into t values (1)", "write"],
    ["merge into t using s on t.id = s.id when matched then do nothing", "write"],
    ["create table t (x int)", "write"],
    ["begin", "write"],
    ["set search_path = x", "write"],
    ["call do_things()", "write"],
    ["do $$ begin perform 1; end $$", "write"],
    ["select 1; delete from t", "write"],
    ["select 1 -- x\r; delete from t", "write"],
    ["lock table t", "write"],
    ["selec 1", "write"],
  ] as [string, Intent][])("%j -> %s", (sql, intent) => {
    expect(analyse(sql).intent).toBe(intent);
  });
});

describe("PostgreSQL reader: transaction control", () => {
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
    ["prepare transaction 'x'", true],
    ["commit prepared 'x'", true],
    ["end", true],
    ["abort", true],
    ["select 'commit'", false],
    ["select 1 -- commit", false],
    // PostgreSQL ends a -- comment at a carriage return as well as a line feed.
    ["select 1 -- comment\r; commit", true],
    ["select 1 -- comment\rcommit", false], // COMMIT is then the column's alias
    ["select 1 /* nested /* comment */ still comment */ ; commit", true],
    ["select 1 /* nested /* comment */ commit */", false],
    ["select E'it\\'s; commit'", false],
    ["select $f$ ; commit $f$", false],
    ["insert into t values (1); insert into t values (2)", false],
  ] as [string, boolean][])("%j ends a transaction: %s", (sql, expected) => {
    expect(analyse(sql).endsTransaction).toBe(expected);
    expect(analyse(sql).commitsInParts).toBe(expected);
  });

  it("counts statements as the server splits them", () => {
    expect(analyse("select 1").statementCount).toBe(1);
    expect(analyse("select 1;").statementCount).toBe(1);
    expect(analyse("select ';'; select 2").statementCount).toBe(2);
    expect(analyse("select 1 -- x\rselect 2").understood).toBe(false); // a syntax error: one statement, not two
  });
});

describe("PostgreSQL reader: session state", () => {
  it.each([
    ["select 1", true],
    ["  SELECT * FROM t WHERE id = $1", true],
    ["/* hint */ insert into t values (1)", true],
    ["with x as (select 1) update t set a = 1", true],
    ["(select 1) union (select 2)", true],
    ["show search_path", true],
    ["select * from t for update", true],
    ["explain select 1", true],
    ["set search_path = x", false],
    ["SET LOCAL statement_timeout = 5", false],
    ["reset all", false],
    ["create temp table t (x int)", false],
    ["create table pg_temp.t (x int)", false],
    ["select * into temporary t from x", false],
    ["select * into pg_temp.t from x", false],
    ["prepare p as select 1", false],
    ["deallocate all", false],
    ["listen channel", false],
    ["declare c cursor with hold for select 1", false],
    ["begin", false],
    ["do $$ begin perform 1; end $$", false],
    ["select 1; set role x", false],
    ["update pg_settings set setting = 'x' where name = 'search_path'", true],
    ["selec 1", false],
  ] as [string, boolean][])("%j leaves no state: %s", (sql, clean) => {
    expect(analyse(sql).leavesNoState).toBe(clean);
  });

  it("lists the functions a text calls, unescaped and unqualified, for the volatility check", () => {
    expect(analyse("select pg_catalog.set_config('a', 'b', false), now()").functions).toEqual(["set_config", "now"]);
    expect(analyse('select U&"set\\005fconfig"(\'a\', \'b\', false)').functions).toEqual(["set_config"]);
    expect([...analyse("select * from generate_series(1, 3) g where g > abs(-1)").functions].sort()).toEqual(["abs", "generate_series"]);
  });
});

describe("PostgreSQL reader: what a read-only principal may send", () => {
  it.each([
    ["select * from t", undefined],
    ["select set_config('a', 'b', false)", undefined], // a function: its volatility is checked on the session
    ["select 'set x = 1; do'", undefined],
    ["show search_path", undefined],
    ["explain select 1", undefined],
    ["explain insert into t values (1)", undefined],
    ["savepoint a", undefined],
    ["rollback to savepoint a", undefined],
    ["declare c cursor for select 1", undefined],
    ["fetch 10 from c", undefined],
    ["set transaction read write", "SET and RESET statements"],
    ["select 1 -- x\rset transaction read write", 'statements the gateway cannot read (syntax error at or near "transaction")'],
    ["select 1; -- x\rset transaction read write", "SET and RESET statements"],
    ["  SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE", "SET and RESET statements"],
    ["reset transaction_read_only", "SET and RESET statements"],
    ["do $$ begin insert into t values (1); end $$", "DO statements"],
    ["commit", "transaction control"],
    ["/* hi */ begin", "transaction control"],
    ["insert into t values (1)", "INSERT statements"],
    ["select * into pg_temp.t from x", "SELECT ... INTO and writing-CTE statements"],
    ["with d as (delete from t returning *) select * from d", "SELECT ... INTO and writing-CTE statements"],
    ["select * from t for update", "row locks (FOR UPDATE/SHARE)"],
    ["explain analyze delete from t", "DELETE statements"],
    ["lock table t in access exclusive mode", "LOCK statements"],
    ["declare c cursor with hold for select 1", "cursors WITH HOLD"],
    ["call p()", "CALL statements"],
    ["listen x", "LISTEN statements"],
  ] as [string, string | undefined][])("%j is refused for: %s", (sql, reason) => {
    expect(analyse(sql).readOnlyRefusal).toBe(reason);
  });
});

describe("PostgreSQL reader: texts too large to parse on the event loop", () => {
  const rows = Array.from({ length: 5000 }, (_, i) => `(${i}, 'v${i}')`).join(",");

  it("reads a large single statement carefully: a write, never retried as a read, state assumed", () => {
    const analysis = analyse(`insert into t values ${rows}`);
    expect(analysis).toMatchObject({ understood: true, statementCount: 1, intent: "write", endsTransaction: false, leavesNoState: false });
    expect(analysis.readOnlyRefusal).toContain("KiB");
  });

  it("finds transaction control behind comments PostgreSQL's way, and treats several statements as not understood", () => {
    expect(analyse(`/* a /* nested */ b */ -- x\rcommit; select '${rows}'`).understood).toBe(false);
    expect(analyse(`commit -- ${rows}`).endsTransaction).toBe(true);
    expect(analyse(`rollback to savepoint s -- ${rows}`).endsTransaction).toBe(false);
    expect(analyse(`select '${rows};' -- ; \r`).statementCount).toBe(1);
  });
});
