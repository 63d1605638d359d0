import { describe, expect, it } from "vitest";
import { ResultBudget } from "./result-budget.js";

describe("a statement's result budget", () => {
  it("keeps rows up to the row bound, then refuses the row past it and skips every later one", () => {
    const budget = new ResultBudget({ maxRows: 2, maxBytes: 1000 });
    expect(budget.nextRow() && budget.keep(1)).toBe(true);
    expect(budget.nextRow() && budget.keep(1)).toBe(true);
    expect(budget.nextRow()).toBe(true);
    expect(budget.keep(1)).toBe(false);
    expect(budget.overLimit).toBe(true);
    expect(budget.nextRow()).toBe(false);
  });

  it("passes the byte bound on the row whose size crosses it", () => {
    const budget = new ResultBudget({ maxRows: 100, maxBytes: 10 });
    expect(budget.nextRow() && budget.keep(10)).toBe(true);
    expect(budget.nextRow() && budget.keep(1)).toBe(false);
  });

  it("says in RESULT_TOO_LARGE what the bounds are and how much of the result it saw", () => {
    const budget = new ResultBudget({ maxRows: 1, maxBytes: 1000 });
    for (let i = 0; i < 3; i++) if (budget.nextRow()) budget.keep(4);
    const error = budget.tooLarge();
    expect(error.code).toBe("RESULT_TOO_LARGE");
    expect(error.message).toContain("limit of 1 rows or 1000 bytes (saw at least 3 rows, 8 bytes)");
  });
});
