/**
 * The idempotency suite (idempotency-suite.ts) against the Aurora PostgreSQL stand-in's writer
 * (test/support/aurora-standin.ts): the gateway's login meets Aurora's refused WAL functions, so its
 * tokens are the writer's clock after the commit.
 */
import { startAuroraStandin } from "../../support/aurora-standin.js";
import { defineIdempotencySuite } from "./idempotency-suite.js";

defineIdempotencySuite({
  name: "the Aurora PostgreSQL stand-in's writer",
  engine: "postgres",
  tokens: { form: /^T\d+$/, order: (token) => Number(token.slice(1)) },
  async createDatabase() {
    const standin = await startAuroraStandin({ readerCount: 1 });
    const writer = standin.primary;
    return {
      url: writer.url(),
      port: writer.port,
      run: async (sql) => {
        await writer.query(sql);
      },
      count: async (table) => Number((await writer.query<{ n: string }>(`select count(*) as n from ${table}`))[0]?.n),
      killCommitting: async () =>
        (
          await writer.query(
            "select pg_terminate_backend(pid) from pg_stat_activity where datname = 'postgres' and application_name = 'poolgate' and state = 'active' and query like 'COMMIT%' and wait_event = 'PgSleep'",
          )
        ).length,
      drop: () => standin.destroy(),
    };
  },
});
