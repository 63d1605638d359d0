/**
 * The stream suite (streams-suite.ts) against the Aurora PostgreSQL stand-in's writer
 * (test/support/aurora-standin.ts): the gateway's login meets Aurora's refused WAL functions, so
 * writes that stream their rows carry the writer's clock as their token.
 */
import { startAuroraStandin } from "../../support/aurora-standin.js";
import { defineStreamSuite, POSTGRES_STREAM_DIALECT } from "./streams-suite.js";

defineStreamSuite({
  name: "the Aurora PostgreSQL stand-in's writer",
  dialect: POSTGRES_STREAM_DIALECT,
  async setup() {
    const standin = await startAuroraStandin({ readerCount: 1 });
    const writer = standin.primary;
    await writer.query("create table ledger (note text)");
    return {
      url: writer.url(),
      statementRunning: async (marker) =>
        (
          await writer.query(
            "select 1 from pg_stat_activity where datname = 'postgres' and application_name = 'poolgate' and state <> 'idle' and position($1 in query) > 0",
            [marker],
          )
        ).length > 0,
      ledgerRows: async () => Number((await writer.query<{ n: string }>("select count(*) as n from ledger"))[0]?.n),
      cleanup: () => standin.destroy(),
    };
  },
});
