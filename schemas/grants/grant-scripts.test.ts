import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { mysqlIdempotencySql } from "../../gateway/engines/mysql/idempotency-sql.js";
import { postgresIdempotencySql } from "../../gateway/engines/postgres/idempotency-sql.js";

const read = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8");
const SCRIPTS = { postgres: read("./postgres.sql"), mysql: read("./mysql.sql") };
const oneLine = (sql: string) => sql.replaceAll(/\s+/g, " ").trim();

describe("the grant scripts", () => {
  it("are what docs/security-and-logins.md shows, whole", () => {
    const readme = read("../../docs/security-and-logins.md");
    for (const [engine, script] of Object.entries(SCRIPTS)) expect(readme.includes("```sql\n" + script + "```\n"), `docs/security-and-logins.md block of schemas/grants/${engine}.sql`).toBe(true);
  });

  it("create the idempotency table with the gateway's own statements, where the gateway looks for it", () => {
    for (const [script, sql] of [
      [SCRIPTS.postgres, postgresIdempotencySql(undefined)],
      [SCRIPTS.mysql, mysqlIdempotencySql],
    ] as const) {
      for (const statement of sql.create(sql.defaultTable)) expect(oneLine(script)).toContain(oneLine(statement));
    }
  });
});
