import { createTestMysqlDatabase } from "../support/mysql.js";
import { MYSQL_DIALECT } from "./core-suite.js";
import { defineEngineConnectionSuite } from "./engine-connection-suite.js";

defineEngineConnectionSuite({
  name: "the local MariaDB server (MySQL engine)",
  sql: {
    ...MYSQL_DIALECT,
    sessionId: "select connection_id()",
    sleep: (seconds) => `select sleep(${seconds})`,
    createItems: "create table contract_items (id int primary key, name varchar(100)) engine=InnoDB",
    setting: { change: "set @contract_marker = 'changed'", read: "select @contract_marker" },
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
