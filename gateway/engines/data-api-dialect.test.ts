import { describe, expect, it } from "vitest";
import type { ColumnDetail, StatementResult } from "./engine.js";
import { mysqlDataApiDialect } from "./mysql/data-api-dialect.js";
import { postgresDataApiDialect } from "./postgres/data-api-dialect.js";

const detail = (precision: number, originalName = "c"): ColumnDetail => ({
  table: "t",
  originalName,
  nullable: true,
  autoIncrement: false,
  signed: true,
  precision,
  scale: 0,
});

function resultOf(types: string[], details?: ColumnDetail[]): StatementResult {
  return {
    command: "SELECT",
    columns: types.map((type, i) => ({ name: `c${i}`, type })),
    rows: [],
    rowCount: 0,
    ...(details ? { describeColumns: () => details } : {}),
  };
}

describe("the PostgreSQL Data API dialect", () => {
  const dialect = postgresDataApiDialect;

  it("numbers placeholders once per name and writes the Field's type as a cast", () => {
    expect(dialect.repeatedNamesShareAValue).toBe(true);
    expect(dialect.placeholder(2, "int8")).toBe("$2::int8");
    expect(dialect.placeholder(1, undefined)).toBe("$1");
    expect(dialect.sqlTypeOf({ longValue: 1 }, undefined)).toBe("int8");
    expect(dialect.sqlTypeOf({ stringValue: "2024-01-01" }, "DATE")).toBe("date");
    expect(dialect.sqlTypeOf({ stringValue: "{}" }, "JSON")).toBeUndefined();
    expect(dialect.sqlTypeOf({ isNull: true }, undefined)).toBeUndefined();
  });

  it("plans columns by type name alone, arrays by their element, without asking for column details", () => {
    const result = resultOf(["int8", "numeric", "jsonb", "_int4", "text"]);
    result.describeColumns = () => {
      throw new Error("not needed");
    };
    expect(dialect.columnPlans(result)).toEqual([{ kind: "long" }, { kind: "decimal" }, { kind: "json" }, { kind: "array", element: "long" }, { kind: "string" }]);
    expect(dialect.columnType({ name: "xs", type: "_int4" }, undefined, { kind: "array", element: "long" })).toMatchObject({ type: 2003, arrayBaseColumnType: 4, name: "xs" });
    expect(dialect.columnType({ name: "s", type: "text" }, undefined, { kind: "string" })).toMatchObject({ type: 12, isCaseSensitive: true });
  });
});

describe("the MySQL Data API dialect", () => {
  const dialect = mysqlDataApiDialect;

  it("writes one ? per occurrence and leaves the types to the values", () => {
    expect(dialect.repeatedNamesShareAValue).toBe(false);
    expect(dialect.placeholder(3, undefined)).toBe("?");
    expect(dialect.sqlTypeOf({ longValue: 1 }, undefined)).toBeUndefined();
  });

  it("writes TINYINT(1) and BIT(1) as booleans reported as BIT, under the column's own name", () => {
    const details = [detail(1, "flag"), detail(4), detail(1), detail(8), detail(0)];
    const plans = dialect.columnPlans(resultOf(["tinyint", "tinyint", "bit", "bit", "bigint unsigned"], details));
    expect(plans).toEqual([{ kind: "boolean" }, { kind: "long" }, { kind: "boolean" }, { kind: "bits" }, { kind: "long" }]);
    expect(dialect.columnType({ name: "f", type: "tinyint" }, details[0], { kind: "boolean" })).toMatchObject({ typeName: "BIT", type: -7, name: "flag" });
    expect(dialect.columnType({ name: "n", type: "bigint unsigned" }, undefined, { kind: "long" })).toMatchObject({ typeName: "BIGINT UNSIGNED", type: -5, name: "n" });
  });
});
