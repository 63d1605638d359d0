import { describe, expect, it } from "vitest";
import { dsqlMigrationProblem, isDdl, splitStatements } from "./sql-statements.js";

describe("splitting a migration into statements", () => {
  it.each([
    ["create table a (x int); create table b (y int);", ["create table a (x int)", "create table b (y int)"]],
    ["insert into t values ('a;b'); select 1", ["insert into t values ('a;b')", "select 1"]],
    [`select "odd;name" from t`, [`select "odd;name" from t`]],
    ["select 'it''s; fine'", ["select 'it''s; fine'"]],
    ["-- a comment; with a semicolon\ncreate table a (x int);", ["-- a comment; with a semicolon\ncreate table a (x int)"]],
    ["/* block; comment */ select 1;", ["/* block; comment */ select 1"]],
    ["create function f() returns int language sql as $body$ select 1; $body$;", ["create function f() returns int language sql as $body$ select 1; $body$"]],
    ["select $1::int", ["select $1::int"]],
    [";;  ; -- only a comment\n", []],
  ])("%j", (sql, expected) => {
    expect(splitStatements(sql)).toEqual(expected);
  });
});

describe("DSQL's one DDL per transaction", () => {
  it("tells DDL (schema and role changes) from DML by the first word after comments", () => {
    for (const ddl of ["create table t (x int)", "-- why\nALTER TABLE t ADD COLUMN y int", "drop index i", "grant select on t to r", "aws iam grant r to 'arn'"]) expect(isDdl(ddl)).toBe(true);
    for (const dml of ["insert into t values (1)", "update t set x = 1", "delete from t", "with a as (select 1) insert into t select * from a"]) expect(isDdl(dml)).toBe(false);
  });

  it("accepts one DDL statement alone or DML only, and names the rule otherwise", () => {
    expect(dsqlMigrationProblem("create table if not exists t (x int primary key);")).toBeUndefined();
    expect(dsqlMigrationProblem("insert into t values (1); insert into t values (2);")).toBeUndefined();
    expect(dsqlMigrationProblem("create table a (x int); create table b (x int);")).toMatch(/2 statements, 2 of them DDL; Aurora DSQL runs one DDL statement per transaction/);
    expect(dsqlMigrationProblem("create table a (x int); insert into a values (1);")).toMatch(/2 statements, 1 of them DDL/);
  });
});
