/** The topology harness suite (topology-harness-suite.ts) on PostgreSQL: streaming replicas, read-only while in recovery. */
import { startTopology } from "../support/pg-topology.js";
import { defineTopologyHarnessSuite } from "./topology-harness-suite.js";

defineTopologyHarnessSuite({
  name: "PostgreSQL",
  start: () => startTopology(2),
  createTable: "create table t (x int)",
  table: "t",
  readOnly: async (instance) => (await instance.query<{ r: boolean }>("select pg_is_in_recovery() as r"))[0]?.r === true,
});
