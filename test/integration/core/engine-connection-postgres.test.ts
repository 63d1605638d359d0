import { createTestDatabase } from "../../support/postgres.js";
import { POSTGRES_DIALECT } from "./core-suite.js";
import { defineEngineConnectionSuite } from "./engine-connection-suite.js";

defineEngineConnectionSuite({
  name: "the local PostgreSQL server",
  failedStatementAbortsTransaction: true,
  positionWithWrite: true,
  sql: {
    ...POSTGRES_DIALECT,
    sessionId: "select pg_backend_pid()",
    sleep: (seconds) => `select pg_sleep(${seconds})`,
    createItems: "create table contract_items (id int primary key, name text)",
    slowInsert: (id, seconds) => `insert into contract_items (id, name) select ${id}, 'slow' from pg_sleep(${seconds})`,
    outsideTransactionOnly: "vacuum contract_items",
    failsAtCommit: {
      setup: [
        "drop table if exists contract_children, contract_parents",
        "create table contract_parents (id int primary key)",
        "create table contract_children (parent int references contract_parents (id) deferrable initially deferred)",
      ],
      write: "insert into contract_children (parent) values (404)",
      count: "select count(*) from contract_children",
    },
    setting: { change: "set application_name = 'contract-changed'", read: "select current_setting('application_name')" },
    stream: {
      typed:
        "g, g::int8 * 1000000000000 as big, (g / 3.0)::numeric(20,10) as num, 'text ' || g as t, null::text as nothing, " +
        "timestamptz '2024-01-02 03:04:05+00' + g * interval '1 second' as ts, jsonb_build_object('g', g, 'big', 12345678901234567890) as j, " +
        "array[g, g + 1] as a, g % 2 = 0 as even, '\\x0102'::bytea as bytes, 1.5::float8 * g as f",
      failsAt: (row, rows) => `select g, 1 / (g - ${row}) as v from generate_series(1, ${rows}) g`,
      failure: { sqlstate: "22012" },
      sleepsAfter: (rows, seconds) =>
        `select g, repeat('x', 20000) as pad, case when g > ${rows} then (select 1 from pg_sleep(${seconds})) else 0 end as s from generate_series(1, ${rows + 1}) g`,
    },
  },
  async setup() {
    const db = await createTestDatabase();
    return {
      url: db.url,
      running: async (pid) => (await db.admin.query("select 1 from pg_stat_activity where pid = $1 and state = 'active'", [pid])).rowCount === 1,
      terminate: async (pid) => {
        await db.admin.query("select pg_terminate_backend($1)", [pid]);
      },
      cleanup: () => db.drop(),
    };
  },
});
