/**
 * The routing suite (routing-suite.ts) on the Aurora PostgreSQL stand-in (test/support/aurora-standin.ts):
 * the community replica functions refused as Aurora refuses them, positions and lag read from
 * aurora_replica_status(). Then what only Aurora has: the refusal told once with its SQLSTATE, and
 * token reads served by readers under real apply lag, never stale.
 */
import { type AuroraStandin, startAuroraStandin } from "../../support/aurora-standin.js";
import { defineRoutingSuite } from "./routing-suite.js";
import { auroraPostgresCases } from "./routing-aurora-cases.js";

defineRoutingSuite({
  name: "the Aurora PostgreSQL stand-in (a writer and two readers)",
  dialect: {
    port: "inet_server_port()",
    createHits: "create table hits (id serial primary key, port int not null, note text)",
    hitsTable: "hits",
    p1: "$1",
    insertHit: (note) => `insert into hits (port, note) values (inet_server_port(), '${note}') returning id`,
    insertedId: (body) => body.rows[0]?.id,
    // Aurora's positions are the writer's time (gateway/engines/postgres/aurora-time-position.ts).
    token: /^T\d+$/,
    foreignToken: "0-1-5",
    primaryOnlyReads: ["select inet_server_port() as port, nextval('hits_id_seq')", "select inet_server_port() as port from hits for update limit 1"],
    request: {},
  },
  start: () => startAuroraStandin(),
  setApplyLag: (topology, lagMs) => (topology as AuroraStandin).setLag(lagMs),
  engineCases: (context) => auroraPostgresCases(context),
});
