/** The stale-DNS suite (stale-dns-suite.ts) for the MySQL engine, on a MariaDB primary and two GTID replicas, replica1 semi-synchronous. */
import { startMariaDbTopology } from "../../support/mariadb-topology.js";
import { defineStaleDnsSuite } from "./stale-dns-suite.js";

defineStaleDnsSuite({
  name: "MariaDB (MySQL engine)",
  start: () => startMariaDbTopology(2, { semiSyncReplica: "replica1" }),
  createWrites: "create table test.writes (id int auto_increment primary key, port int not null) engine=InnoDB",
  port: "@@port",
});
