/**
 * Maintenance on the Aurora MySQL stand-in (aurora-mysql-standin.ts): maintenance-aurora-suite.ts. A
 * reboot is MariaDB stopped and started again on its port, in its role (a reader resumes replicating
 * where it stopped); the lag manager's sessions to it are opened again once it is back.
 */
import { it } from "vitest";
import { type AuroraMysqlInstance, startAuroraMysqlStandin } from "../../support/aurora-mysql-standin.js";
import { AURORA_STANDIN_DATABASE } from "../../support/aurora-mysql-wire.js";
import { waitFor } from "../../support/wait-for.js";
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
  engineCases: (context) => {
    /** The instance's clock now, in UTC, as the lag manager writes LAST_UPDATE_TIMESTAMP. */
    const utcNow = async (instance: AuroraMysqlInstance) =>
      (await instance.query<{ at: string }>("SELECT DATE_FORMAT(UTC_TIMESTAMP(6), '%Y-%m-%d %H:%i:%s.%f') AS at"))[0]?.at ?? "";
    /** Whether the writer's replica_host_status row for `instance` was written after `since`. */
    const rowWrittenSince = async (writer: AuroraMysqlInstance, instance: AuroraMysqlInstance, since: string) => {
      const [row] = await writer.query<{ fresh: number }>(
        `SELECT LAST_UPDATE_TIMESTAMP > ? AS fresh FROM ${AURORA_STANDIN_DATABASE}.replica_host_status WHERE SERVER_ID = ?`,
        [since, instance.serverId],
      );
      return Number(row?.fresh) === 1;
    };

    it("the stand-in's lag manager measures a rebooted reader again, and writes the status again after the writer's reboot", async () => {
      const { standin } = context();
      const writer = standin.primary;
      const [reader] = standin.replicas as [AuroraMysqlInstance];
      await reader.stop("fast");
      await reader.start();
      const readerBack = await utcNow(reader);
      await waitFor(() => rowWrittenSince(writer, reader, readerBack), 20000, "the rebooted reader's row to be measured again");
      await writer.stop("fast");
      await writer.start();
      const writerBack = await utcNow(writer);
      await waitFor(
        async () => (await rowWrittenSince(writer, writer, writerBack)) && (await rowWrittenSince(writer, reader, writerBack)),
        20000,
        "the rebooted writer's status rows to be written again",
      );
      // The reader replicates from the rebooted writer again: it applies the heartbeat the manager stamps
      // there, so the lag it reports is its apply delay, not the time since the writer went down.
      await waitFor(
        async () => {
          const [row] = await reader.query<{ applied: number }>(`SELECT stamped_at > ? AS applied FROM ${AURORA_STANDIN_DATABASE}.heartbeat WHERE id = 1`, [writerBack]);
          return Number(row?.applied) === 1;
        },
        20000,
        "the reader to apply a heartbeat stamped after the writer's reboot",
      );
    });
  },
});
