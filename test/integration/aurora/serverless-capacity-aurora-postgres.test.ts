/** Serverless v2 capacity changes on the Aurora PostgreSQL stand-in: the contract of serverless-capacity-suite.ts. */
import { startAuroraStandin } from "../../support/aurora-standin.js";
import { serverlessCapacitySuite } from "./serverless-capacity-suite.js";

serverlessCapacitySuite({
  engine: "PostgreSQL",
  start: async () => {
    const standin = await startAuroraStandin({ readerCount: 1 });
    await standin.primary.query("create table sc_writes (id serial primary key, port int not null)");
    await standin.primary.query("insert into sc_writes (port) values (0)");
    return standin;
  },
  write: "insert into sc_writes (port) values (inet_server_port()) returning aurora_db_instance_identifier() as server, port",
  read: "select aurora_db_instance_identifier() as server, inet_server_port() as port from sc_writes limit 1",
  insertAnsweringSession: "insert into sc_writes (port) values (-1) returning pg_backend_pid() as pid",
  countInserted: "select count(*) as n from sc_writes where port = -1",
  slowRead: "select pg_sleep(0.5) as slept, inet_server_port() as port",
  slowReadsRunning: "select count(*)::int as n from pg_stat_activity where usename = 'aurora_app' and state = 'active' and query like 'select pg_sleep(0.5)%'",
  poolSessions: "select pid from pg_stat_activity where usename = 'aurora_app' and application_name = 'poolgate'",
});
