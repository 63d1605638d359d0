/**
 * Aurora PostgreSQL's SQL for the time positions of ../aurora-time-position.ts, where the WAL position
 * functions are refused (docs/aurora.md).
 *
 * A write's token is `clock_timestamp()` after its COMMIT; a reader's position is the writer's
 * `last_update_timestamp - replica_lag_in_msec` row for it in aurora_replica_status().
 */
import { READ_ONLY_INSTANCE_SQL } from "./read-only-instance.js";

export type PositionSource = "wal" | "aurora-clock";

/** The writer's time after a commit, as a token (one text column). */
export const AURORA_COMMIT_POSITION_SQL = "SELECT 'T' || floor(extract(epoch from clock_timestamp()) * 1000000)::bigint::text";

/**
 * What the cluster's sessions have learnt about positions, shared by all of them (the first inspection
 * finds out; later sessions ask in one round trip): WAL positions, Aurora's clock positions, or none.
 */
export interface PositionKnowledge {
  source: PositionSource | "none" | undefined;
  /** Why the WAL functions are not used: the server's refusal. */
  refusal: { sqlstate: string; message: string } | undefined;
}

/**
 * Aurora PostgreSQL's inspection in one round trip: role, instance id, the writer's clock; on the
 * writer, each reader's applied-through time from aurora_replica_status() (its rows for other instances
 * carry last_update_timestamp; the connected instance's own row has none since 13.9); on a reader, its
 * own replica_lag_in_msec.
 */
export const AURORA_INSPECT_SQL =
  "SELECT pg_is_in_recovery(), aurora_db_instance_identifier(), floor(extract(epoch from clock_timestamp()) * 1000000)::bigint::text, " +
  "CASE WHEN pg_is_in_recovery() THEN NULL ELSE (SELECT string_agg(server_id || '=' || " +
  "floor(extract(epoch from last_update_timestamp) * 1000000 - replica_lag_in_msec * 1000)::bigint::text, ',') FROM aurora_replica_status() " +
  "WHERE session_id <> 'MASTER_SESSION_ID' AND last_update_timestamp IS NOT NULL AND replica_lag_in_msec IS NOT NULL) END, " +
  "CASE WHEN pg_is_in_recovery() THEN (SELECT replica_lag_in_msec::float8 FROM aurora_replica_status() WHERE server_id = aurora_db_instance_identifier() LIMIT 1) END, " +
  // The instance makes every session read-only (the -old1 writer after a Blue/Green switchover): see READ_ONLY_INSTANCE_SQL.
  READ_ONLY_INSTANCE_SQL;
