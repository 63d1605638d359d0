import { describe, expect, it } from "vitest";
import { mayChangeSessionState } from "./session-state.js";

describe("session-state classifier", () => {
  const cases: [string, boolean][] = [
    ["select 1", false],
    ["  SELECT * FROM t WHERE id = $1", false],
    ["-- comment\nselect 1", false],
    ["/* hint */ insert into t values (1)", false],
    ["with x as (select 1) update t set a = 1", false],
    ["(select 1) union (select 2)", false],
    ["show search_path", false],
    ["select pg_advisory_xact_lock(1)", false],
    ["set search_path = x", true],
    ["SET LOCAL statement_timeout = 5", true],
    ["reset all", true],
    ["select set_config('a.b', 'c', false)", true],
    ["select pg_advisory_lock(1)", true],
    ["select pg_try_advisory_lock_shared(1)", true],
    ["create temp table t (x int)", true],
    ["select * into temporary t from x", true],
    ["prepare p as select 1", true],
    ["deallocate all", true],
    ["listen channel", true],
    ["declare c cursor with hold for select 1", true],
    ["begin", true],
    ["create table t (x int)", true],
    ["do $$ begin perform 1; end $$", true],
    ["select 1; set role x", true],
    ["select 1;", false],
    ["select ';'", true],
  ];
  it.each(cases)("%s -> %s", (sql, dirty) => {
    expect(mayChangeSessionState(sql)).toBe(dirty);
  });
});
