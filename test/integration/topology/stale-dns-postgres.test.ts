/** The stale-DNS suite (stale-dns-suite.ts) on a PostgreSQL primary and two streaming replicas, replica1 synchronous. */
import { startTopology } from "../../support/pg-topology.js";
import { defineStaleDnsSuite } from "./stale-dns-suite.js";

defineStaleDnsSuite({
  name: "PostgreSQL",
  start: () => startTopology(2, { synchronousStandby: "replica1" }),
  createWrites: "create table writes (id serial primary key, port int not null)",
  port: "inet_server_port()",
});
