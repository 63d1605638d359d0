/** The topology harness suite (topology-harness-suite.ts) on MariaDB: GTID replicas, read_only, positions compared by value. */
import { startMariaDbTopology } from "../../support/mariadb-topology.js";
import { defineTopologyHarnessSuite } from "./topology-harness-suite.js";

defineTopologyHarnessSuite({
  name: "MariaDB",
  start: () => startMariaDbTopology(2),
  createTable: "create table test.t (x int primary key)",
  table: "test.t",
  readOnly: async (instance) => Number((await instance.query<{ ro: number }>("select @@read_only as ro"))[0]?.ro) === 1,
  positions: { primary: "@@gtid_binlog_pos", replica: "@@gtid_slave_pos" },
  receivedAll: async (replica, primary) => {
    const [status] = await replica.query<{ Gtid_IO_Pos: string }>("SHOW SLAVE STATUS");
    const [written] = await primary.query<{ pos: string }>("select @@gtid_binlog_pos as pos");
    return status !== undefined && status.Gtid_IO_Pos === written?.pos;
  },
});
