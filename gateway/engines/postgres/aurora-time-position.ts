/**
 * Positions on Aurora PostgreSQL, where the WAL position functions are refused (docs/aurora.md): a
 * point in the writer's time, "T" and microseconds since the epoch ("T1764342000123456").
 *
 * - A write's token is the writer's clock read after its COMMIT completed, on the same session.
 * - The writer's own position is its clock at the monitor's check.
 * - A reader's position is what the writer reports of it in aurora_replica_status():
 *   `last_update_timestamp - replica_lag_in_msec`, the writer's time up to which the reader has applied
 *   the writer's changes. Every figure is the database's; the gateway's own clock plays no part, so a
 *   clock difference between gateway tasks cannot make a token read stale.
 * - A reader at `a` has applied a token `b` only when `a >= b + AURORA_CLOCK_MARGIN_MS`: the margin
 *   covers rounding of the millisecond lag figure and a clock difference between Aurora's instances
 *   (the writer's report time and the writer's token time come from the same instance; the margin is
 *   a second wall).
 */

export type PositionSource = "wal" | "aurora-clock";

/** See the header; stated in the README's Aurora section. */
export const AURORA_CLOCK_MARGIN_MS = 10;
const MARGIN_US = AURORA_CLOCK_MARGIN_MS * 1000;

/** The writer's time after a commit, as a token (one text column). */
export const AURORA_COMMIT_POSITION_SQL = "SELECT 'T' || floor(extract(epoch from clock_timestamp()) * 1000000)::bigint::text";

export function isTimePosition(text: string): boolean {
  return /^T\d{1,17}$/.test(text);
}

/** >= 0 when an instance applied through `a` has applied what committed by `b` (both time positions). */
export function compareTimePositions(a: string, b: string): number {
  return Number(a.slice(1)) - MARGIN_US - Number(b.slice(1));
}

/** The time position `micros` (a whole number of microseconds). */
export function timePosition(micros: number): string {
  return `T${Math.floor(micros)}`;
}

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
  "CASE WHEN pg_is_in_recovery() THEN (SELECT replica_lag_in_msec::float8 FROM aurora_replica_status() WHERE server_id = aurora_db_instance_identifier() LIMIT 1) END";

/** "reader1=1764342000123456,reader2=..." as positions by server id. */
export function readerPositionsOf(listed: string | null): Map<string, string> {
  const positions = new Map<string, string>();
  for (const entry of (listed ?? "").split(",")) {
    const at = entry.lastIndexOf("=");
    if (at > 0) positions.set(entry.slice(0, at), `T${entry.slice(at + 1)}`);
  }
  return positions;
}
