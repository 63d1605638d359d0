import { describe, expect, it } from "vitest";
import { mayChangeSessionState } from "./session-state.js";

describe("MySQL session-state classifier", () => {
  it.each([
    "select 1",
    "SELECT * FROM t WHERE id = ?",
    "insert into t values (?, ?)",
    "update t set a = 1",
    "delete from t",
    "replace into t values (1)",
    "with x as (select 1) select * from x",
    "/* note */ select @@read_only",
    "-- hi\nselect 1;",
    "# hi\nselect 1",
  ])("keeps %j clean", (sql) => {
    expect(mayChangeSessionState(sql)).toBe(false);
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
    "select 1 into @x",
    "begin",
    "start transaction",
    "xa start 'a'",
    "prepare s from 'select 1'",
    "select 1; set @x = 2",
    "/*!50000 set @x = 1 */",
    "select /*!50000 1 */",
    "call p()",
  ])("flags %j as changing the session", (sql) => {
    expect(mayChangeSessionState(sql)).toBe(true);
  });
});
