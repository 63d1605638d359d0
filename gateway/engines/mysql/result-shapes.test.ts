import { describe, expect, it } from "vitest";
import { ResultShapes } from "./result-shapes.js";
import type { MysqlField } from "./values.js";

const LONGLONG = 0x08;
const VAR_STRING = 0xfd;
const field = (name: string, columnType: number, extra: Partial<MysqlField> = {}): MysqlField => ({ name, columnType, flags: 0, characterSet: 45, columnLength: 20, decimals: 0, ...extra });

describe("result shapes", () => {
  it("gives a statement described alike the same columns, and converters per bigNumbers mode", () => {
    const shapes = new ResultShapes(8);
    const first = shapes.of("select id, name from t", [field("id", LONGLONG), field("name", VAR_STRING)], "string");
    const again = shapes.of("select id, name from t", [field("id", LONGLONG), field("name", VAR_STRING)], "string");
    expect(again.columns).toBe(first.columns);
    expect(again.converters).toBe(first.converters);
    expect(first.columns).toEqual([{ name: "id", type: "bigint" }, { name: "name", type: "varchar" }]);
    const asNumbers = shapes.of("select id, name from t", [field("id", LONGLONG), field("name", VAR_STRING)], "number");
    expect(asNumbers.columns).toBe(first.columns);
    expect(asNumbers.converters[0]?.("9007199254740993")).toBe(9007199254740992);
    expect(first.converters[0]?.("9007199254740993")).toBe("9007199254740993");
  });

  it("works a changed description out again (ALTER TABLE, unsigned, another name)", () => {
    const shapes = new ResultShapes(8);
    const before = shapes.of("select * from t", [field("n", LONGLONG)], "string");
    const unsigned = shapes.of("select * from t", [field("n", LONGLONG, { flags: 32 })], "string");
    expect(unsigned.columns).not.toBe(before.columns);
    expect(unsigned.columns).toEqual([{ name: "n", type: "bigint unsigned" }]);
    const renamed = shapes.of("select * from t", [field("m", LONGLONG, { flags: 32 })], "string");
    expect(renamed.columns).toEqual([{ name: "m", type: "bigint unsigned" }]);
    const wider = shapes.of("select * from t", [field("m", LONGLONG, { flags: 32 }), field("s", VAR_STRING)], "string");
    expect(wider.columns).toHaveLength(2);
  });

  it("keeps at most its capacity of statements, the oldest going first", () => {
    const shapes = new ResultShapes(2);
    const a = shapes.of("a", [field("x", LONGLONG)], "string");
    shapes.of("b", [field("x", LONGLONG)], "string");
    shapes.of("c", [field("x", LONGLONG)], "string");
    expect(shapes.of("a", [field("x", LONGLONG)], "string").columns).not.toBe(a.columns);
    const none = new ResultShapes(0);
    expect(none.of("a", [field("x", LONGLONG)], "string").columns).toEqual([{ name: "x", type: "bigint" }]);
  });

  it("gives text values as the server printed them, whichever protocol carried them", () => {
    const shapes = new ResultShapes(8);
    const FLOAT = 0x04;
    const DATETIME = 0x0c;
    const TIME = 0x0b;
    const LONG = 0x03;
    const BLOB = 0xfc;
    const text = shapes.of("select *", [field("f", FLOAT), field("d", DATETIME, { decimals: 3 }), field("t", TIME, { decimals: 2 }), field("n", LONG), field("b", BLOB, { characterSet: 63 })], "text");
    const [f, d, t, n, b] = text.converters as [(v: unknown) => unknown, (v: unknown) => unknown, (v: unknown) => unknown, (v: unknown) => unknown, (v: unknown) => unknown];
    expect(f(Math.fround(0.1))).toBe("0.1");
    expect(d("2024-01-02 03:04:05")).toBe("2024-01-02 03:04:05.000");
    expect(d("2024-01-02 03:04:05.120")).toBe("2024-01-02 03:04:05.120");
    expect(t("-12:34:56.5")).toBe("-12:34:56.50");
    expect(n(-2147483648)).toBe("-2147483648");
    const bytes = Buffer.from([0, 255]);
    expect(b(bytes)).toBe(bytes);
    expect(text.columns).toBe(shapes.of("select *", [field("f", FLOAT), field("d", DATETIME, { decimals: 3 }), field("t", TIME, { decimals: 2 }), field("n", LONG), field("b", BLOB, { characterSet: 63 })], "string").columns);
  });
});
