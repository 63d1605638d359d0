import { describe, expect, it } from "vitest";
import { FunctionVolatility } from "./function-volatility.js";

/** pg_proc's answers as VOLATILITY_SQL returns them: [name, volatile, builtinVolatile]. */
const PG_PROC: unknown[][] = [
  ["txid_current", false, false],
  ["pg_current_xact_id", false, false],
  ["txid_current_if_assigned", false, false],
  ["pg_current_xact_id_if_assigned", false, false],
  ["nextval", true, true],
  ["lower", false, false],
  ["add_entry", true, false],
];

function learned(): FunctionVolatility {
  const volatility = new FunctionVolatility();
  volatility.record(
    PG_PROC.map(([name]) => String(name)),
    PG_PROC,
  );
  return volatility;
}

describe("functions a read-only principal may call", () => {
  it("refuses the built-ins that assign a transaction id, although pg_proc marks them stable", () => {
    const volatility = learned();
    expect(volatility.refusedForReadOnly(["lower", "txid_current"])).toBe("txid_current");
    expect(volatility.refusedForReadOnly(["pg_current_xact_id"])).toBe("pg_current_xact_id");
  });

  it("allows the forms that only look at the transaction id, stable built-ins and the database's own functions", () => {
    expect(learned().refusedForReadOnly(["txid_current_if_assigned", "pg_current_xact_id_if_assigned", "lower", "add_entry", "random"])).toBeUndefined();
  });

  it("refuses volatile built-ins and names pg_proc does not know", () => {
    const volatility = learned();
    expect(volatility.refusedForReadOnly(["nextval"])).toBe("nextval");
    volatility.record(["no_such_function"], []);
    expect(volatility.refusedForReadOnly(["no_such_function"])).toBe("no_such_function");
  });
});
