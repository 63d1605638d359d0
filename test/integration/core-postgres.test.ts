import { createTestDatabase } from "../support/postgres.js";
import { defineCoreSuite } from "./core-suite.js";

defineCoreSuite({
  name: "the local PostgreSQL server",
  async setup() {
    const db = await createTestDatabase();
    return { config: { clusters: { default: { writerUrl: db.url } } }, cleanup: () => db.drop() };
  },
});
