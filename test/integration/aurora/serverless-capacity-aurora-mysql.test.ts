/** Serverless v2 capacity changes on the Aurora MySQL stand-in: the contract of serverless-capacity-suite.ts. */
import { AURORA_MYSQL_LOGIN, startAuroraMysqlStandin } from "../../support/aurora-mysql-standin.js";
import { serverlessCapacitySuite } from "./serverless-capacity-suite.js";

const user = AURORA_MYSQL_LOGIN.user;

serverlessCapacitySuite({
  engine: "MySQL",
  start: async () => {
    const standin = await startAuroraMysqlStandin({ readerCount: 1 });
    await standin.primary.query("create table test.sc_writes (id bigint auto_increment primary key, port int not null)");
    await standin.primary.query("insert into test.sc_writes (port) values (0)");
    return standin;
  },
  write: "insert into sc_writes (port) values (@@port) returning @@aurora_server_id as server, port",
  read: "select @@aurora_server_id as server, @@port as port from sc_writes limit 1",
  insertAnsweringSession: "insert into sc_writes (port) values (-1) returning connection_id() as pid",
  countInserted: "select count(*) as n from test.sc_writes where port = -1",
  slowRead: "select sleep(0.5) as slept, @@port as port",
  slowReadsRunning: `select count(*) as n from information_schema.processlist where user = '${user}' and info like 'select sleep(0.5)%'`,
  // The monitor's sessions have no default database (gateway/engines/mysql/engine.ts).
  poolSessions: `select id as pid from information_schema.processlist where user = '${user}' and db = 'test'`,
});
