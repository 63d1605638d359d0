/**
 * PostgreSQL built-ins the result cache reasons about (gateway/cache/): those whose answer depends only
 * on their arguments (a SELECT calling nothing else may be cached), and the wider set known to change
 * nothing (clocks, random numbers, settings read, window functions), so that a read calling only these
 * touches no relation it does not name. Any other name — a user function, an extension's — may write,
 * and a statement calling it invalidates the whole cache.
 */

/** Deterministic for the same arguments and data, whatever the session (no time zone, locale or clock). */
const DETERMINISTIC = new Set(
  `
  count sum avg min max coalesce nullif greatest least lower upper length char_length character_length octet_length abs
  round floor ceil ceiling trunc sign mod power sqrt exp ln log substr substring concat concat_ws replace trim btrim ltrim
  rtrim lpad rpad left right strpos split_part reverse repeat md5 array_agg string_agg json_agg jsonb_agg json_object_agg
  jsonb_object_agg json_build_object jsonb_build_object json_build_array jsonb_build_array to_json to_jsonb row_to_json
  array_length array_to_string cardinality unnest bool_and bool_or every bit_and bit_or stddev variance jsonb_array_length
  json_array_length jsonb_extract_path jsonb_extract_path_text json_extract_path json_extract_path_text
  `
    .trim()
    .split(/\s+/),
);

/** Known to change nothing another statement could see, but not deterministic. */
const NON_WRITING = new Set(
  `
  now clock_timestamp statement_timestamp transaction_timestamp timeofday random random_normal gen_random_uuid uuidv4 uuidv7
  version current_setting current_database current_schema current_schemas pg_backend_pid pg_sleep pg_sleep_for
  pg_sleep_until to_char to_date to_timestamp to_number date_trunc date_part extract age format row_number rank dense_rank
  percent_rank cume_dist ntile lag lead first_value last_value nth_value has_table_privilege has_schema_privilege
  pg_postmaster_start_time pg_is_in_recovery pg_current_wal_lsn pg_last_wal_replay_lsn generate_series
  `
    .trim()
    .split(/\s+/),
);

export function isDeterministicFunction(name: string): boolean {
  return DETERMINISTIC.has(name);
}

export function isNonWritingFunction(name: string): boolean {
  return DETERMINISTIC.has(name) || NON_WRITING.has(name);
}
