/** Failover the Aurora way on the Aurora PostgreSQL stand-in (aurora-standin.ts): failover-aurora-suite.ts. */
import { makeDurableOn } from "../../support/aurora-failover.js";
import { AURORA_POSTGRES_LOAD } from "../../support/aurora-failover-load.js";
import { type AuroraInstance, startAuroraStandin } from "../../support/aurora-standin.js";
import { STREAM_ROWS } from "./failover-aurora-cases.js";
import { auroraFailoverSuite } from "./failover-aurora-suite.js";

auroraFailoverSuite({
  standinName: "the Aurora PostgreSQL stand-in",
  start: async () => {
    const standin = await startAuroraStandin({ readerCount: 2 });
    try {
      await makeDurableOn(standin, standin.replicas[0] as AuroraInstance);
    } catch (err) {
      await standin.destroy();
      throw err;
    }
    return standin;
  },
  load: AURORA_POSTGRES_LOAD,
  runId: "i34",
  onReaderSql: "select pg_is_in_recovery() as on_reader",
  onReader: (value) => value === true,
  suites: {
    createTables: ["create table aurora_keyed (id serial primary key, k text not null)", "create table aurora_tokens (id text primary key)"],
    keyedInsert: "insert into aurora_keyed (k) values ($1)",
    keyedCounts: "select k, count(*)::int as n from aurora_keyed group by k",
    tokenInsert: "insert into aurora_tokens (id) values ($1)",
    tokenRead: "select count(*)::int as n from aurora_tokens where id = $1",
    streamSql: `select g, pg_sleep(case when g % 100 = 0 then 0.02 else 0 end) as slept from generate_series(1, ${STREAM_ROWS}) g`,
  },
});
