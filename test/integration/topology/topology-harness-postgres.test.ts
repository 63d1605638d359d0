/** The topology harness suite (topology-harness-suite.ts) on PostgreSQL: streaming replicas, read-only while in recovery. */
import { startTopology } from "../../support/pg-topology.js";
import { defineTopologyHarnessSuite } from "./topology-harness-suite.js";

defineTopologyHarnessSuite({
  name: "PostgreSQL",
  start: () => startTopology(2),
  createTable: "create table t (x int)",
  table: "t",
  readOnly: async (instance) => (await instance.query<{ r: boolean }>("select pg_is_in_recovery() as r"))[0]?.r === true,
  receivedAll: async (replica, primary) => {
    const [written] = await primary.query<{ lsn: string }>("select pg_current_wal_lsn()::text as lsn");
    const [received] = await replica.query<{ behind: boolean }>("select pg_last_wal_receive_lsn() < $1::pg_lsn as behind", [written?.lsn]);
    return received?.behind === false;
  },
});
