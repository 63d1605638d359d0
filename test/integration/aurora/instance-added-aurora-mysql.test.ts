/**
 * A reader added to the running Aurora MySQL stand-in (test/support/aurora-mysql-standin.ts, a spare
 * reader brought into the cluster): the contract of instance-added-suite.ts.
 */
import { startAuroraMysqlStandin } from "../../support/aurora-mysql-standin.js";
import { instanceAddedSuite } from "./instance-added-suite.js";

instanceAddedSuite({
  engine: "MySQL",
  start: async () => {
    const standin = await startAuroraMysqlStandin({ readerCount: 1, spareReaders: 2, distinctHosts: true });
    await standin.primary.query("create table test.ia_writes (id bigint auto_increment primary key, server varchar(100) not null, port int not null)");
    return standin;
  },
  write: "insert into ia_writes (server, port) values (@@aurora_server_id, @@port) returning server, port",
  read: "select @@aurora_server_id as server, @@port as port",
});
