/**
 * A Blue/Green switchover on the Aurora PostgreSQL stand-in (test/support/aurora-bluegreen.ts): the
 * contract of bluegreen-suite.ts.
 */
import { createBlueGreenDeployment } from "../../support/aurora-bluegreen.js";
import { type AuroraInstance, type AuroraStandin, startAuroraStandin } from "../../support/aurora-standin.js";
import { blueGreenSuite } from "./bluegreen-suite.js";

blueGreenSuite<AuroraInstance, AuroraStandin>({
  engine: "PostgreSQL",
  startBlue: async () => {
    const blue = await startAuroraStandin({ readerCount: 1 });
    await blue.primary.query("create table bg_writes (id serial primary key, server text not null)");
    return blue;
  },
  createDeployment: createBlueGreenDeployment,
  table: "bg_writes",
  write: "insert into bg_writes (server) values (aurora_db_instance_identifier()) returning server, inet_server_port() as port",
  read: "select aurora_db_instance_identifier() as server, inet_server_port() as port from bg_writes limit 1",
  loginSessions: async (instance) => Number((await instance.query<{ n: number }>("select count(*) as n from pg_stat_activity where usename = 'aurora_app'"))[0]?.n),
  refusesWrites: async (instance) => (await instance.query<{ ro: string }>("select current_setting('default_transaction_read_only') as ro"))[0]?.ro === "on",
});
