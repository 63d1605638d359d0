import { describe, expect, it } from "vitest";
import { createTestMysqlDatabase } from "../support/mysql.js";
import { defineCoreSuite, MYSQL_DIALECT } from "./core-suite.js";

defineCoreSuite({
  name: "the local MariaDB server (MySQL engine)",
  dialect: MYSQL_DIALECT,
  async setup() {
    const db = await createTestMysqlDatabase();
    return { config: { clusters: { default: { writerUrl: db.url } } }, cleanup: () => db.drop() };
  },
});

describe("the MySQL target", () => {
  it("is a real MariaDB or MySQL server", async () => {
    const db = await createTestMysqlDatabase();
    try {
      const [row] = await db.query<{ v: string }>("select version() as v");
      expect(row?.v).toMatch(/^\d+\.\d+\.\d+/);
    } finally {
      await db.drop();
    }
  });
});
