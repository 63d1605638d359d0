/**
 * Maintenance on the Aurora PostgreSQL stand-in (aurora-standin.ts): maintenance-aurora-suite.ts. A
 * reboot is `pg_ctl stop -m fast` and a start on the same port and data directory.
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { type AuroraInstance, startAuroraStandin } from "../../support/aurora-standin.js";
import { maintenanceAuroraSuite } from "./maintenance-aurora-suite.js";

maintenanceAuroraSuite<AuroraInstance>({
  standinName: "the Aurora PostgreSQL stand-in",
  start: () => startAuroraStandin({ readerCount: 2 }),
  createTable: "create table mt_writes (id serial primary key, port int not null)",
  writeSql: "insert into mt_writes (port) values (inet_server_port()) returning inet_server_port() as port",
  readSql: "select inet_server_port() as port from mt_writes limit 1",
  writtenPortsSql: "select distinct port from mt_writes",
  scale: {
    // Modifying a provisioned instance's class restarts it with the class's memory settings (the
    // parameter group's formulas read DBInstanceClassMemory:
    // https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/USER_ParamValuesRef.html): on the
    // stand-in, a restart with other memory settings.
    restartScaled: async (instance) => {
      appendFileSync(join(instance.dataDir, "postgresql.conf"), "shared_buffers = '48MB'\nwork_mem = '8MB'\n");
      await instance.start();
    },
    setting: async (instance) => (await instance.query<{ buffers: string }>("select current_setting('shared_buffers') as buffers"))[0]?.buffers ?? "",
    expected: "48MB",
  },
});
