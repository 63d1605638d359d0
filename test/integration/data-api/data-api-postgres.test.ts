import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../support/postgres.js";
import { defineDataApiSuite } from "./data-api-suite.js";

defineDataApiSuite({
  engine: "postgres",
  async setup() {
    const db = await createTestDatabase();
    const readerUser = `poolgate_reporting_${randomBytes(4).toString("hex")}`;
    await db.admin.query(`CREATE ROLE ${readerUser} LOGIN PASSWORD 'reporting-password'`);
    return {
      url: db.url,
      readerUser,
      readerPassword: "reporting-password",
      cleanup: async () => {
        await db.drop();
        const { default: pg } = await import("pg");
        const admin = new pg.Client({ connectionString: "postgres://postgres@127.0.0.1:5432/test" });
        await admin.connect();
        await admin.query(`DROP ROLE IF EXISTS ${readerUser}`);
        await admin.end();
      },
    };
  },
});

describe("the Data API's PostgreSQL target", () => {
  it("is the real local PostgreSQL server", async () => {
    const db = await createTestDatabase();
    try {
      const { rows } = await db.admin.query<{ version: string }>("select version()");
      expect(rows[0]?.version).toMatch(/^PostgreSQL \d+/);
    } finally {
      await db.drop();
    }
  });
});
