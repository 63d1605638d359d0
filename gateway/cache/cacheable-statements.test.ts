import { describe, expect, it } from "vitest";
import { mysqlSqlReader } from "../engines/mysql/sql-reader.js";
import { postgresSqlReader } from "../engines/postgres/sql-reader.js";
import { readDependencies, writeDependencies } from "./dependencies.js";

const postgres = postgresSqlReader();
const mysql = mysqlSqlReader();

describe("what the SQL readers let the result cache keep", () => {
  it.each([
    ["SELECT * FROM items WHERE id = $1", true],
    ["SELECT count(*), max(price) FROM items", true],
    ["SELECT lower(name) FROM items ORDER BY 1", true],
    ["SELECT now()", false],
    ["SELECT CURRENT_USER", false],
    ["SELECT * FROM items TABLESAMPLE SYSTEM (10)", false],
    ["SELECT * FROM items FOR SHARE", false],
    ["SELECT my_function(id) FROM items", false],
    ["SELECT nextval('s')", false],
    ["WITH d AS (DELETE FROM items RETURNING *) SELECT * FROM d", false],
    ["SELECT * INTO copy FROM items", false],
    ["SHOW search_path", false],
    ["EXPLAIN SELECT 1", false],
    ["SELECT 1; SELECT 2", false],
  ])("PostgreSQL: %s -> %s", (sql, deterministic) => {
    expect(postgres.analyse(sql).deterministic).toBe(deterministic);
  });

  it.each([
    ["SELECT * FROM items WHERE id = ?", true],
    ["SELECT COUNT(*), IFNULL(MAX(price), 0) FROM items", true],
    ["SELECT NOW()", false],
    ["SELECT CURRENT_TIMESTAMP", false],
    ["SELECT @@version", false],
    ["SELECT @x", false],
    ["SELECT RAND()", false],
    ["SELECT * FROM items FOR UPDATE", false],
    ["SELECT * FROM items LOCK IN SHARE MODE", false],
    ["SELECT my_function(id) FROM items", false],
    ["SELECT id INTO @x FROM items", false],
    ["SELECT 1; SELECT 2", false],
    ["SHOW TABLES", false],
  ])("MySQL: %s -> %s", (sql, deterministic) => {
    expect(mysql.analyse(sql).deterministic).toBe(deterministic);
  });

  it("names the tables PostgreSQL statements touch, and none for statements that may touch others", () => {
    expect(postgres.analyse("SELECT * FROM a JOIN s.b ON true WHERE EXISTS (SELECT 1 FROM c)").tables?.slice().sort()).toEqual(["a", "b", "c"]);
    expect(postgres.analyse("UPDATE a SET x = 1 FROM b").tables?.slice().sort()).toEqual(["a", "b"]);
    expect(postgres.analyse("TRUNCATE a").tables).toBeUndefined();
    expect(postgres.analyse("ALTER TABLE a ADD COLUMN y int").tables).toBeUndefined();
    expect(mysql.analyse("UPDATE a SET x = 1").tables).toBeUndefined();
  });

  it("makes a write of known tables bump those tables, and any other write bump the unknown-tables generation", () => {
    const write = (sql: string, reader = postgres) => writeDependencies([{ analysis: reader.analyse(sql) }], "tables");
    expect(write("INSERT INTO a VALUES (1)")).toEqual(["*", "t:a"]);
    expect(write("SELECT * FROM a")).toEqual([]);
    expect(write("SELECT f() FROM a")).toEqual(["*", "?"]);
    expect(write("DROP TABLE a")).toEqual(["*", "?"]);
    expect(write("UPDATE a SET x = 1", mysql)).toEqual(["*", "?"]);
    expect(writeDependencies([{ analysis: postgres.analyse("INSERT INTO a VALUES (1)") }], "cluster")).toEqual(["*"]);
    expect(readDependencies(postgres.analyse("SELECT * FROM b, a"), "tables")).toEqual(["?", "t:a", "t:b"]);
    expect(readDependencies(mysql.analyse("SELECT * FROM a"), "tables")).toEqual(["*"]);
  });
});
