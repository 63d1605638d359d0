import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createTestMysqlDatabase } from "../../support/mysql.js";
import { defineDataApiSuite } from "./data-api-suite.js";

defineDataApiSuite({
  engine: "mysql",
  async setup() {
    const db = await createTestMysqlDatabase();
    const readerUser = `rep_${randomBytes(4).toString("hex")}`;
    await db.admin.query(`CREATE USER '${readerUser}'@'%' IDENTIFIED BY 'reporting-password'`);
    await db.admin.query(`GRANT SELECT ON ${db.name}.* TO '${readerUser}'@'%'`);
    return {
      url: db.url,
      readerUser,
      readerPassword: "reporting-password",
      cleanup: async () => {
        await db.admin.query(`DROP USER IF EXISTS '${readerUser}'@'%'`);
        await db.drop();
      },
    };
  },
});

describe("the Data API's MySQL target", () => {
  it("is the real local MariaDB or MySQL server", async () => {
    const db = await createTestMysqlDatabase();
    try {
      const [row] = await db.query<{ v: string }>("select version() as v");
      expect(row?.v).toMatch(/^\d+\.\d+\.\d+/);
    } finally {
      await db.drop();
    }
  });
});
