import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { grantStatements, GrantScriptError, loadGrantScript, loginNames } from "./grant-script.js";

const grantScript = (engine: "postgres" | "mysql") => loadGrantScript(fileURLToPath(new URL("../../schemas/grants/", import.meta.url)), engine);

const names = { database: "orders", readWrite: "gw_rw", readOnly: "gw_ro" };

describe("the README's grant scripts as the migrator runs them", () => {
  it("leave the logins' creation to the migrator and give every other statement the deployment's names", () => {
    for (const engine of ["postgres", "mysql"] as const) {
      const statements = grantStatements(engine, grantScript(engine), names);
      expect(statements.length, engine).toBeGreaterThan(3);
      expect(statements.filter((statement) => /^create\s+(role|user)\b/i.test(statement)), engine).toEqual([]);
      expect(statements.join("\n"), engine).not.toMatch(/poolgate_r[wo]|'\.\.\.'|--/);
    }
    const pg = grantStatements("postgres", grantScript("postgres"), names);
    expect(pg).toContain('GRANT CONNECT ON DATABASE "orders" TO "gw_rw", "gw_ro"');
    expect(pg).toContain('GRANT SELECT, INSERT, UPDATE, DELETE ON poolgate.idempotency_keys TO "gw_rw"');
    const mysql = grantStatements("mysql", grantScript("mysql"), names);
    expect(mysql).toContain("GRANT SELECT ON `orders`.* TO 'gw_ro'@'%'");
    expect(mysql).toContain("GRANT SELECT, INSERT, UPDATE, DELETE ON `poolgate_internal`.`idempotency_keys` TO 'gw_rw'@'%'");
  });

  it("refuse a statement whose names it does not recognise, rather than grant the example's", () => {
    expect(() => grantStatements("mysql", "GRANT SELECT ON app.things TO 'poolgate_ro'@'localhost';", names)).toThrow(GrantScriptError);
  });

  it("need exactly one login of each access", () => {
    expect(() => loginNames([{ username: "a", access: "read-write" }])).toThrow(/exactly one read-only login; the run has 0/);
  });
});
