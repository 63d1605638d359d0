/**
 * Maintenance on the Aurora MySQL stand-in (aurora-mysql-standin.ts): maintenance-aurora-suite.ts. A
 * reboot is MariaDB stopped and started again on its port, in its role (a reader resumes replicating
 * where it stopped); the lag manager's sessions to it are opened again once it is back.
 */
import { type AuroraMysqlInstance, startAuroraMysqlStandin } from "../../support/aurora-mysql-standin.js";
import { maintenanceAuroraSuite } from "./maintenance-aurora-suite.js";

/** Another class's connection limit (a memory-derived default on Aurora MySQL). */
const SCALED_MAX_CONNECTIONS = "210";

maintenanceAuroraSuite<AuroraMysqlInstance>({
  standinName: "the Aurora MySQL stand-in",
  start: () => startAuroraMysqlStandin({ readerCount: 2 }),
  createTable: "create table test.mt_writes (id int auto_increment primary key, port int not null) engine=InnoDB",
  writeSql: "insert into mt_writes (port) values (@@port)",
  readSql: "select @@port as port from mt_writes limit 1",
  writtenPortsSql: "select distinct port from test.mt_writes",
  scale: {
    // max_connections' default follows the class's memory, and the buffer pool is sized from it
    // (innodb_buffer_pool_size = {DBInstanceClassMemory*3/4}):
    // https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/AuroraMySQL.Managing.Performance.html,
    // https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/USER_ParamValuesRef.html
    restartScaled: (instance) => instance.start({ "max-connections": SCALED_MAX_CONNECTIONS, "innodb-buffer-pool-size": "48M" }),
    setting: async (instance) => String((await instance.query<{ v: number }>("select @@max_connections as v"))[0]?.v),
    expected: SCALED_MAX_CONNECTIONS,
  },
});
