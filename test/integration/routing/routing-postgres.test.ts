/**
 * The routing suite (routing-suite.ts) on a real PostgreSQL primary with two streaming replicas
 * (test/support/pg-topology.ts); where each statement ran is read back from inet_server_port().
 */
import { type PgInstance, setApplyDelay, startTopology } from "../../support/pg-topology.js";
import { defineRoutingSuite } from "./routing-suite.js";

defineRoutingSuite({
  name: "a PostgreSQL primary and two streaming replicas",
  dialect: {
    port: "inet_server_port()",
    createHits: "create table hits (id serial primary key, port int not null, note text)",
    hitsTable: "hits",
    p1: "$1",
    insertHit: (note) => `insert into hits (port, note) values (inet_server_port(), '${note}') returning id`,
    insertedId: (body) => body.rows[0]?.id,
    token: /^[0-9A-F]+\/[0-9A-F]+$/,
    foreignToken: "0-1-5",
    primaryOnlyReads: ["select inet_server_port() as port, nextval('hits_id_seq')", "select inet_server_port() as port from hits for update limit 1"],
    request: {},
  },
  start: () => startTopology(2),
  setApplyLag: (topology, lagMs) => setApplyDelay(topology.replicas as PgInstance[], lagMs),
});
