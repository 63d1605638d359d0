/**
 * Integers a caller binds on MySQL go as BIGINT, encoded by mysql2's typed parameters (with the
 * project's patch: safe integers are checked and written without BigInt arithmetic). Every bit must
 * arrive: the boundaries of each width, both signs, and the largest safe integers, read back exactly
 * from a BIGINT column, from `SELECT ?`, and through an index lookup and a LIMIT.
 */
import { describe, expect, it } from "vitest";
import { ENGINE_TEST_OPTIONS as OPTIONS, useMysqlEngineSession } from "../../support/mysql-engine-session.js";

const BOUNDARIES = [
  0, 1, -1, 127, -128, 128, -129, 255, 256, 32767, -32768, 65535, 65536, 8388607, -8388608, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, -(2 ** 31) - 1, 2 ** 32 - 1, 2 ** 32,
  -(2 ** 32), 2 ** 40 + 12345, -(2 ** 40) - 12345, 2 ** 52, -(2 ** 52), Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER - 1, Number.MIN_SAFE_INTEGER + 1,
];

describe("integer parameters on MySQL arrive exactly", () => {
  const session = useMysqlEngineSession(["create table ints (n bigint primary key, u bigint unsigned)"]);

  it("stores, selects and finds each boundary value, signed and unsigned", async () => {
    const connection = session.connection;
    for (const n of BOUNDARIES) {
      await connection.execute(session.statement("insert into ints (n, u) values (?, ?)", [n, Math.abs(n)]), OPTIONS);
      const echoed = await connection.execute(session.statement("select ?, ? + 0, cast(? as char)", [n, n, n]), OPTIONS);
      expect(echoed.rows[0]).toEqual([String(n), String(n), String(n)]);
    }
    const stored = await connection.execute(session.statement("select n, u from ints order by n", []), OPTIONS);
    expect(stored.rows).toEqual([...BOUNDARIES].sort((a, b) => a - b).map((n) => [String(n), String(Math.abs(n))]));
    for (const n of BOUNDARIES) {
      const found = await connection.execute(session.statement("select n from ints where n = ? and u = ?", [n, Math.abs(n)]), OPTIONS);
      expect(found.rows).toEqual([[String(n)]]);
    }
    const limited = await connection.execute(session.statement("select n from ints order by n limit ?", [3]), OPTIONS);
    expect(limited.rows).toEqual([[String(Number.MIN_SAFE_INTEGER)], [String(Number.MIN_SAFE_INTEGER + 1)], [String(-(2 ** 52))]]);
  });

  it("binds integers past the safe range as they were given (a double), never a wrapped value", async () => {
    const beyond = await session.connection.execute(session.statement("select ? > 9007199254740991, ? < -9007199254740991", [2 ** 60, -(2 ** 60)]), OPTIONS);
    expect(beyond.rows).toEqual([[1, 1]]);
  });
});
