import { createTestDatabase } from "../support/postgres.js";
import { defineIdempotencySuite } from "./idempotency-suite.js";

defineIdempotencySuite({
  name: "the local PostgreSQL server",
  engine: "postgres",
  async createDatabase() {
    const db = await createTestDatabase();
    return {
      url: db.url,
      port: Number(new URL(db.url).port || 5432),
      run: async (sql) => {
        await db.admin.query(sql);
      },
      count: async (table) => Number((await db.admin.query<{ n: string }>(`select count(*) as n from ${table}`)).rows[0]?.n),
      drop: () => db.drop(),
    };
  },
});
