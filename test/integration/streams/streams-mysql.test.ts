import { createTestMysqlDatabase } from "../../support/mysql.js";
import { mysqlSeries } from "../core/core-suite.js";
import { defineStreamSuite } from "./streams-suite.js";

defineStreamSuite({
  name: "the local MariaDB server (MySQL engine)",
  dialect: {
    series: mysqlSeries,
    manyTypes:
      "g, g * 1000000000000 as big, cast(g / 3 as decimal(20,10)) as num, concat('text ', g) as t, null as nothing, " +
      "timestamp('2024-01-02 03:04:05') + interval g second as ts, json_object('g', g, 'big', 12345678901234567890) as j, " +
      "g % 2 = 0 as even, 1.5e0 * g as f",
    repeat: (n) => `repeat('x', ${n})`,
    // A correlated subquery answering two rows from row 5000 on: the server fails there, after sending the rows before.
    failsAtRow5000: { sql: `select g, if(g < 5000, g, (select g union all select g)) as v from ${mysqlSeries(10000)}`, sqlstate: "21000", engineCode: 1242 },
    writeReturning: "insert into ledger (note) values ('streamed') returning note",
  },
  async setup() {
    const db = await createTestMysqlDatabase();
    await db.query("create table ledger (note text)");
    return {
      url: db.url,
      statementRunning: async (marker) => {
        const [rows] = await db.admin.query("select ID from information_schema.PROCESSLIST where DB = ? and ID <> CONNECTION_ID() and INSTR(INFO, ?) > 0", [db.name, marker]);
        return (rows as unknown[]).length > 0;
      },
      ledgerRows: async () => Number((await db.query<{ n: number }>("select count(*) as n from ledger"))[0]?.n),
      cleanup: () => db.drop(),
    };
  },
});
