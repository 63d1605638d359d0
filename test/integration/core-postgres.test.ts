import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../support/postgres.js";
import { defineCoreSuite, POSTGRES_DIALECT } from "./core-suite.js";

defineCoreSuite({
  name: "the local PostgreSQL server",
  dialect: POSTGRES_DIALECT,
  async setup() {
    const db = await createTestDatabase();
    return { config: { clusters: { default: { writerUrl: db.url } } }, cleanup: () => db.drop() };
  },
});

describe("the PostgreSQL target", () => {
  it("is a real PostgreSQL server, not the embedded one", async () => {
    const db = await createTestDatabase();
    try {
      const { rows } = await db.admin.query<{ version: string }>("select version()");
      expect(rows[0]?.version).toMatch(/^PostgreSQL \d+/);
      expect(rows[0]?.version).not.toContain("PGlite");
    } finally {
      await db.drop();
    }
  });
});
