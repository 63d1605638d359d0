import { createTestDatabase } from "../../support/postgres.js";
import { defineStreamSuite, POSTGRES_STREAM_DIALECT } from "./streams-suite.js";

defineStreamSuite({
  name: "the local PostgreSQL",
  dialect: POSTGRES_STREAM_DIALECT,
  async setup() {
    const db = await createTestDatabase();
    await db.admin.query("create table ledger (note text)");
    return {
      url: db.url,
      statementRunning: async (marker) => {
        const { rows } = await db.admin.query(
          "select 1 from pg_stat_activity where datname = $1 and application_name = 'poolgate' and state <> 'idle' and position($2 in query) > 0",
          [db.name, marker],
        );
        return rows.length > 0;
      },
      ledgerRows: async () => Number((await db.admin.query("select count(*) as n from ledger")).rows[0].n),
      cleanup: () => db.drop(),
    };
  },
});
