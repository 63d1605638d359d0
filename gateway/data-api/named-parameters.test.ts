import { describe, expect, it } from "vitest";
import { mysqlDataApiDialect as mysql } from "../engines/mysql/data-api-dialect.js";
import { postgresDataApiDialect as postgres } from "../engines/postgres/data-api-dialect.js";
import { scanNamedParameters } from "./named-parameters.js";

describe("Data API named parameters", () => {
  it("rewrites :name to $n on PostgreSQL, one number per distinct name, digit names included", () => {
    expect(scanNamedParameters("select * from t where a = :1 and b = :2 or c = :1", postgres)).toEqual({
      text: "select * from t where a = $1 and b = $2 or c = $1",
      names: ["1", "2"],
      multipleStatements: false,
    });
    expect(scanNamedParameters("select :0, :param_1", postgres).names).toEqual(["0", "param_1"]);
  });

  it("rewrites :name to ? on MySQL, repeating a name's value at each occurrence", () => {
    expect(scanNamedParameters("insert into t values (:a, :b, :a)", mysql)).toEqual({
      text: "insert into t values (?, ?, ?)",
      names: ["a", "b", "a"],
      multipleStatements: false,
    });
  });

  it("keeps casts, literals, identifiers, comments, dollar quotes and assignments", () => {
    const sql = `select :p::jsonb, '::x :y', "col:z", $$ :w $$ /* :c */ -- :d\n, x::int from t`;
    expect(scanNamedParameters(sql, postgres)).toMatchObject({ text: `select $1::jsonb, '::x :y', "col:z", $$ :w $$ /* :c */ -- :d\n, x::int from t`, names: ["p"] });
    expect(scanNamedParameters("set @x := 1; select 'it\\'s :no', `a:b`, :yes # :no", mysql)).toMatchObject({
      text: "set @x := 1; select 'it\\'s :no', `a:b`, ? # :no",
      names: ["yes"],
    });
  });

  it("adds a typeHint's cast unless the SQL casts the placeholder itself", () => {
    const cast = (name: string) => (name === "d" ? "date" : undefined);
    expect(scanNamedParameters("select :d, :d::text, :e", postgres, cast).text).toBe("select $1::date, $1::text, $2");
  });

  it("follows each dialect's literal and comment rules", () => {
    expect(scanNamedParameters("select E'it\\'s :x', $fn1$ :y $fn1$, :z", postgres)).toMatchObject({ names: ["z"] });
    expect(scanNamedParameters("select 5 --1; delete from t", mysql).multipleStatements).toBe(true);
    expect(scanNamedParameters("select 5 -- :a\n, :b", mysql).names).toEqual(["b"]);
    expect(scanNamedParameters("select /*! :a */ 1", mysql).names).toEqual(["a"]);
    expect(scanNamedParameters("select 1 # it's :no\n, :yes", mysql).names).toEqual(["yes"]);
  });

  it("tells several statements from one with a trailing semicolon", () => {
    expect(scanNamedParameters("select 1; -- trailing comment", postgres).multipleStatements).toBe(false);
    expect(scanNamedParameters("select 1; /* c */ ", mysql).multipleStatements).toBe(false);
    expect(scanNamedParameters("select 1; 'x'", mysql).multipleStatements).toBe(true);
    expect(scanNamedParameters("select 1;", postgres).multipleStatements).toBe(false);
    expect(scanNamedParameters("select 1;  \n", postgres).multipleStatements).toBe(false);
    expect(scanNamedParameters("select 1; select 2", postgres).multipleStatements).toBe(true);
    expect(scanNamedParameters("select ';' ", postgres).multipleStatements).toBe(false);
  });
});
