import { createTestDatabase } from "../../support/postgres.js";
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
      killCommitting: async () =>
        (
          await db.admin.query(
            "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name = 'poolgate' and state = 'active' and query like 'COMMIT%' and wait_event = 'PgSleep'",
            [db.name],
          )
        ).rowCount ?? 0,
      drop: () => db.drop(),
    };
  },
});
