import { createTestDatabase } from "../../support/postgres.js";
import { defineStreamSuite } from "./streams-suite.js";

defineStreamSuite({
  name: "the local PostgreSQL",
  dialect: {
    series: (n) => `generate_series(1, ${n}) g`,
    manyTypes:
      "g, g::int8 * 1000000000000 as big, (g / 3.0)::numeric(20,10) as num, 'text ' || g as t, null::text as nothing, " +
      "timestamptz '2024-01-02 03:04:05+00' + g * interval '1 second' as ts, jsonb_build_object('g', g, 'big', 12345678901234567890) as j, " +
      "array[g, g + 1] as a, g % 2 = 0 as even, '\\x0102'::bytea as bytes, 1.5::float8 * g as f",
    repeat: (n) => `repeat('x', ${n})`,
    failsAtRow5000: { sql: "select 1/(g-5000) as v from generate_series(1, 10000) g", sqlstate: "22012" },
    writeReturning: "insert into ledger (note) values ('streamed') returning note",
  },
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
