import { createTestMysqlDatabase } from "../../support/mysql.js";
import { defineIdempotencySuite } from "./idempotency-suite.js";

defineIdempotencySuite({
  name: "the local MariaDB server (MySQL engine)",
  engine: "mysql",
  async createDatabase() {
    const db = await createTestMysqlDatabase();
    return {
      url: db.url,
      port: Number(new URL(db.url).port || 3306),
      run: async (sql) => {
        await db.query(sql);
      },
      count: async (table) => Number((await db.query<{ n: number | string }>(`select count(*) as n from ${table}`))[0]?.n),
      drop: () => db.drop(),
    };
  },
});
