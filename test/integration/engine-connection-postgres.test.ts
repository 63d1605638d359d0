import { createTestDatabase } from "../support/postgres.js";
import { POSTGRES_DIALECT } from "./core-suite.js";
import { defineEngineConnectionSuite } from "./engine-connection-suite.js";

defineEngineConnectionSuite({
  name: "the local PostgreSQL server",
  sql: {
    ...POSTGRES_DIALECT,
    sessionId: "select pg_backend_pid()",
    sleep: (seconds) => `select pg_sleep(${seconds})`,
    createItems: "create table contract_items (id int primary key, name text)",
    setting: { change: "set application_name = 'contract-changed'", read: "select current_setting('application_name')" },
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
