/**
 * A Blue/Green switchover on the Aurora MySQL stand-in (test/support/aurora-mysql-bluegreen.ts): the
 * contract of bluegreen-suite.ts.
 */
import { createMysqlBlueGreenDeployment } from "../../support/aurora-mysql-bluegreen.js";
import { AURORA_MYSQL_LOGIN, type AuroraMysqlInstance, type AuroraMysqlStandin, startAuroraMysqlStandin } from "../../support/aurora-mysql-standin.js";
import { blueGreenSuite } from "./bluegreen-suite.js";

blueGreenSuite<AuroraMysqlInstance, AuroraMysqlStandin>({
  engine: "MySQL",
  startBlue: async () => {
    const blue = await startAuroraMysqlStandin({ readerCount: 1 });
    await blue.primary.query("create table test.bg_writes (id bigint auto_increment primary key, server varchar(100) not null, port int not null)");
    return blue;
  },
  createDeployment: createMysqlBlueGreenDeployment,
  table: "test.bg_writes",
  write: "insert into bg_writes (server, port) values (@@aurora_server_id, @@port) returning server, port",
  read: "select @@aurora_server_id as server, @@port as port from bg_writes limit 1",
  loginSessions: async (instance) =>
    Number((await instance.query<{ n: number }>("select count(*) as n from information_schema.processlist where user = ?", [AURORA_MYSQL_LOGIN.user]))[0]?.n),
  refusesWrites: async (instance) => Number((await instance.query<{ ro: number }>("select @@global.read_only as ro"))[0]?.ro) === 1,
});
