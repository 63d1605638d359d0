/** A reader added to the running Aurora PostgreSQL stand-in (test/support/aurora-standin.ts): the contract of instance-added-suite.ts. */
import { startAuroraStandin } from "../../support/aurora-standin.js";
import { instanceAddedSuite } from "./instance-added-suite.js";

instanceAddedSuite({
  engine: "PostgreSQL",
  start: async () => {
    const standin = await startAuroraStandin({ readerCount: 1, distinctHosts: true });
    await standin.primary.query("create table ia_writes (id serial primary key, server text not null, port int not null)");
    return standin;
  },
  write: "insert into ia_writes (server, port) values (aurora_db_instance_identifier(), inet_server_port()) returning server, port",
  read: "select aurora_db_instance_identifier() as server, inet_server_port() as port",
});
