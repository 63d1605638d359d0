/**
 * The SQL that gives a community PostgreSQL primary and its streaming replicas Aurora PostgreSQL's
 * surface, installed once on the primary (and replicated). Each behaviour and the AWS page it comes
 * from is listed in docs/aurora.md; this file only spells them.
 *
 * - Refused community functions: a schema (`aurora_standin`) ahead of pg_catalog in the gateway
 *   login's search_path holds functions of the same names that raise what Aurora raises.
 * - `aurora_replica_status()`, `aurora_db_instance_identifier()`, `aurora_version()` in that schema.
 * - Instance ids: a reader is listed under its name as a standby (pg_stat_replication's
 *   application_name) unless `instances` gives it another server id; `instances` also says when a
 *   reader added to the running cluster is listed (aurora-standin.ts, `addReader`).
 * - Real lag: the stand-in's manager records, every few ms on the writer, the time and the WAL insert
 *   position (`applied_samples`); a reader that has replayed a sample's position has applied every
 *   transaction that committed before the sample's time. The writer's `aurora_replica_status()` turns
 *   each standby's replayed position (pg_stat_replication, as of its last report) into that time, and
 *   reports `replica_lag_in_msec` = report time - that time, with the report time as the row's
 *   `last_update_timestamp`.
 */

/** The login the gateway uses on the stand-in, as on Aurora: no superuser. */
export const AURORA_LOGIN = "aurora_app";
export const STANDIN_SCHEMA = "aurora_standin";

/** How the writer answers the WAL functions: Aurora refuses them unless logical replication is on (docs/aurora.md). */
export type WalFunctionsOnWriter = "refused" | "allowed";

/**
 * How `aurora_replica_status()` lists a reader, by its row in `instances`:
 * - "streaming": once it streams from the writer (pg_stat_replication lists it): every reader but one being added;
 * - "hidden": not yet (a reader added, not yet available);
 * - "starting": already, though it is not streaming yet (a reader added, listed while it starts).
 */
export type InstanceListing = "streaming" | "hidden" | "starting";

const refusal = (name: string, returns: string, sqlstate: string, message: string) =>
  `CREATE FUNCTION ${STANDIN_SCHEMA}.${name}() RETURNS ${returns} LANGUAGE plpgsql AS $f$ BEGIN ` +
  `RAISE EXCEPTION '${message}' USING ERRCODE = '${sqlstate}'; END $f$`;

/** Aurora PostgreSQL's words for the replica functions it does not support (SQLSTATE 0A000, feature_not_supported). */
const notSupported = (name: string, returns: string) => refusal(name, returns, "0A000", `Function ${name}() is currently not supported for Aurora`);

export function standinSql(walFunctions: WalFunctionsOnWriter, version: string): string[] {
  const s = STANDIN_SCHEMA;
  return [
    `CREATE SCHEMA ${s}`,
    `CREATE TABLE ${s}.applied_samples (at timestamptz NOT NULL, lsn pg_lsn NOT NULL)`,
    `CREATE INDEX ON ${s}.applied_samples (lsn)`,
    `CREATE TABLE ${s}.instances (application_name text PRIMARY KEY, server_id text NOT NULL, listing text NOT NULL CHECK (listing IN ('streaming', 'hidden', 'starting')))`,
    notSupported("pg_last_wal_replay_lsn", "pg_lsn"),
    notSupported("pg_last_wal_receive_lsn", "pg_lsn"),
    notSupported("pg_last_xact_replay_timestamp", "timestamptz"),
    notSupported("pg_current_xlog_location", "text"),
    ...(walFunctions === "refused"
      ? ["pg_current_wal_lsn", "pg_current_wal_insert_lsn", "pg_current_wal_flush_lsn"].map((name) =>
          refusal(name, "pg_lsn", "55000", "WAL control functions cannot be executed when wal_level < logical"),
        )
      : []),
    `CREATE FUNCTION ${s}.aurora_db_instance_identifier() RETURNS text LANGUAGE sql STABLE AS $f$ SELECT current_setting('${s}.server_id') $f$`,
    `CREATE FUNCTION ${s}.aurora_version() RETURNS text LANGUAGE sql IMMUTABLE AS $f$ SELECT '${version}'::text $f$`,
    // Every column aurora_replica_status() documents, in the page's order
    // (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/aurora_replica_status.html; the page gives no
    // types: these are the stand-in's). What the gateway reads is measured (lag, last_update_timestamp, LSNs);
    // the rest are placeholders of the right kind. The connected instance's own row has a NULL
    // last_update_timestamp (Aurora PostgreSQL 13.9 and later).
    `CREATE FUNCTION ${s}.aurora_replica_status() RETURNS TABLE (server_id text, session_id text, durable_lsn bigint, highest_lsn_rcvd bigint,
       current_read_lsn bigint, cur_replay_latency_in_usec bigint, active_txns integer, is_current boolean, last_transport_error integer,
       last_error_timestamp timestamptz, last_update_timestamp timestamptz, feedback_xmin bigint, feedback_epoch integer,
       replica_lag_in_msec real, log_stream_speed_in_kib_per_second double precision, log_buffer_sequence_number bigint,
       oldest_read_view_trx_id bigint, oldest_read_view_lsn bigint, pending_read_ios bigint, read_ios bigint, iops integer, cpu double precision)
     LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog AS $f$
       SELECT server_id, session_id, durable_lsn, highest_lsn_rcvd, current_read_lsn, 0::bigint, 0, true, 0, NULL::timestamptz,
              last_update_timestamp, 0::bigint, 0, replica_lag_in_msec, 0::float8, 0::bigint, 0::bigint, current_read_lsn, 0::bigint, 0::bigint, 0, 0::float8
         FROM (
       SELECT current_setting('${s}.server_id') AS server_id, 'MASTER_SESSION_ID' AS session_id, (pg_current_wal_lsn() - '0/0')::bigint AS durable_lsn,
              (pg_current_wal_lsn() - '0/0')::bigint AS highest_lsn_rcvd, (pg_current_wal_lsn() - '0/0')::bigint AS current_read_lsn,
              NULL::timestamptz AS last_update_timestamp, 0::real AS replica_lag_in_msec
        WHERE NOT pg_is_in_recovery()
       UNION ALL
       SELECT coalesce(i.server_id, r.application_name), md5(coalesce(i.server_id, r.application_name))::uuid::text, (r.replay_lsn - '0/0')::bigint,
              (r.flush_lsn - '0/0')::bigint, (r.replay_lsn - '0/0')::bigint, r.reply_time,
              GREATEST(0, EXTRACT(EPOCH FROM r.reply_time - applied.at) * 1000)::real
         FROM pg_stat_replication r
         LEFT JOIN ${s}.instances i ON i.application_name = r.application_name
         LEFT JOIN LATERAL (SELECT max(a.at) AS at FROM ${s}.applied_samples a WHERE a.lsn <= r.replay_lsn) applied ON true
        WHERE NOT pg_is_in_recovery() AND coalesce(i.listing, 'streaming') <> 'hidden'
       UNION ALL
       -- A reader listed while it starts: no position and no lag to report yet.
       SELECT i.server_id, md5(i.server_id)::uuid::text, NULL, NULL, NULL, NULL::timestamptz, NULL::real
         FROM ${s}.instances i
        WHERE NOT pg_is_in_recovery() AND i.listing = 'starting'
          AND NOT EXISTS (SELECT 1 FROM pg_stat_replication r WHERE r.application_name = i.application_name)
       UNION ALL
       SELECT current_setting('${s}.server_id'), md5(current_setting('${s}.server_id'))::uuid::text, NULL, NULL, NULL, NULL::timestamptz,
              GREATEST(0, EXTRACT(EPOCH FROM clock_timestamp() - (SELECT max(at) FROM ${s}.applied_samples)) * 1000)::real
        WHERE pg_is_in_recovery()
         ) listed
     $f$`,
    `CREATE ROLE ${AURORA_LOGIN} LOGIN`,
    // CREATE too: as the first schema of the login's search_path it is where unqualified CREATE TABLE
    // lands (on Aurora that is public; here the gateway's DDL puts tables in this schema, still found).
    `GRANT USAGE, CREATE ON SCHEMA ${s} TO ${AURORA_LOGIN}`,
    `GRANT CREATE, USAGE ON SCHEMA public TO ${AURORA_LOGIN}`,
    // Schemas of its own (the gateway's idempotency table), as an application's login on Aurora may.
    `GRANT CREATE ON DATABASE postgres TO ${AURORA_LOGIN}`,
    `ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON TABLES TO ${AURORA_LOGIN}`,
    `ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON SEQUENCES TO ${AURORA_LOGIN}`,
    `ALTER ROLE ${AURORA_LOGIN} SET search_path = ${s}, pg_catalog, "$user", public`,
    // The harness's administrator finds the tables the gateway's DDL put there, after its own.
    `ALTER ROLE postgres SET search_path = "$user", public, ${s}`,
  ];
}
