/**
 * Aurora MySQL's SQL for the time positions of ../aurora-time-position.ts (docs/aurora.md): its
 * readers have no GTID position, so a write's token is the writer's clock after its COMMIT and a
 * reader's position is `LAST_UPDATE_TIMESTAMP - REPLICA_LAG_IN_MILLISECONDS` from the writer's row for
 * it in information_schema.replica_host_status
 * (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/AuroraMySQL.Reference.ISTables.html).
 * Times are read in the session's time zone, which the gateway sets to UTC (engine.ts); SYSDATE(6) is
 * the moment the function runs, not the statement's start.
 */

/** Answers on Aurora MySQL only (the instance's own id); fails elsewhere with an unknown system variable. */
export const AURORA_MYSQL_PROBE_SQL = "SELECT @@aurora_server_id";

const WRITER_MICROS = "CAST(FLOOR(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000) AS CHAR)";

/** The writer's time after a commit, as a token (one column). */
export const AURORA_MYSQL_COMMIT_POSITION_SQL = `SELECT CONCAT('T', ${WRITER_MICROS})`;

/** An Aurora MySQL replica's own lag (Aurora replicas share storage and have no binlog replication status). */
export const AURORA_MYSQL_OWN_LAG_SQL = "SELECT REPLICA_LAG_IN_MILLISECONDS FROM information_schema.replica_host_status WHERE SERVER_ID = @@aurora_server_id";

/**
 * The inspection in one round trip: read-only (a reader), the instance's id, its clock; each reader's
 * applied-through time as the connected instance lists it (used from the writer); the connected
 * instance's own lag; whether its own row is its cluster's writer (MASTER_SESSION_ID). A read-only
 * instance whose row is the writer's is the `-old1` writer after a Blue/Green switchover, read-only until
 * rebooted and replicating from no one (docs/aurora.md): its lag (0 in that row) is unknown, and it
 * serves no reads, as its PostgreSQL counterpart (../postgres/read-only-instance.ts).
 */
export const AURORA_MYSQL_INSPECT_SQL =
  `SELECT @@global.read_only OR @@global.innodb_read_only, @@aurora_server_id, ${WRITER_MICROS}, ` +
  "(SELECT GROUP_CONCAT(CONCAT(SERVER_ID, '=', CAST(FLOOR(UNIX_TIMESTAMP(LAST_UPDATE_TIMESTAMP) * 1000000 - REPLICA_LAG_IN_MILLISECONDS * 1000) AS CHAR))) " +
  "FROM information_schema.replica_host_status WHERE SESSION_ID <> 'MASTER_SESSION_ID' AND LAST_UPDATE_TIMESTAMP IS NOT NULL AND REPLICA_LAG_IN_MILLISECONDS IS NOT NULL), " +
  `(${AURORA_MYSQL_OWN_LAG_SQL} LIMIT 1), ` +
  "(SELECT SESSION_ID = 'MASTER_SESSION_ID' FROM information_schema.replica_host_status WHERE SERVER_ID = @@aurora_server_id LIMIT 1)";

/** Whether the cluster is Aurora MySQL, learnt by the first session that asks and shared by all of them. */
export interface AuroraKnowledge {
  aurora: boolean | undefined;
}
