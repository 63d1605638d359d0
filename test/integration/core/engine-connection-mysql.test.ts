import { createTestMysqlDatabase } from "../../support/mysql.js";
import { MYSQL_DIALECT, mysqlSeries } from "./core-suite.js";
import { defineEngineConnectionSuite } from "./engine-connection-suite.js";

defineEngineConnectionSuite({
  name: "the local MariaDB server (MySQL engine)",
  failedStatementAbortsTransaction: false,
  positionWithWrite: false,
  sql: {
    ...MYSQL_DIALECT,
    sessionId: "select connection_id()",
    sleep: (seconds) => `select sleep(${seconds})`,
    createItems: "create table contract_items (id int primary key, name varchar(100)) engine=InnoDB",
    slowInsert: (id, seconds) => `insert into contract_items (id, name) select ${id}, 'slow' from (select sleep(${seconds})) s`,
    // OPTIMIZE commits implicitly: it is never part of the transaction a write runs in.
    outsideTransactionOnly: "optimize table contract_items",
    setting: { change: "set @contract_marker = 'changed'", read: "select @contract_marker" },
    stream: {
      typed:
        "g, g * 1000000000000 as big, cast(g / 3 as decimal(20,10)) as num, concat('text ', g) as t, null as nothing, " +
        "timestamp('2024-01-02 03:04:05') + interval g second as ts, json_object('g', g, 'big', 12345678901234567890) as j, " +
        "g % 2 = 0 as even, 1.5e0 * g as f",
      // Division by zero is NULL here: a correlated subquery answering two rows fails the statement at that row instead.
      failsAt: (row, rows) => `select g, if(g < ${row}, g, (select g union all select g)) as v from ${mysqlSeries(rows)}`,
      failure: { sqlstate: "21000", engineCode: 1242 },
      // A recursive CTE answers its rows in order (mysqlSeries does not).
      sleepsAfter: (rows, seconds) =>
        `with recursive s (g) as (select 1 union all select g + 1 from s where g <= ${rows}) select g, repeat('x', 20000) as pad, if(g > ${rows}, sleep(${seconds}), 0) as s from s`,
    },
  },
  async setup() {
    const db = await createTestMysqlDatabase();
    return {
      url: db.url,
      running: async (id) => {
        const [rows] = await db.admin.query("select 1 from information_schema.PROCESSLIST where ID = ? and COMMAND in ('Query', 'Execute')", [id]);
        return (rows as unknown[]).length === 1;
      },
      terminate: async (id) => {
        await db.admin.query(`KILL ${Number(id)}`);
      },
      cleanup: () => db.drop(),
    };
  },
});
