/**
 * What the MySQL reader knows of functions: those that write or need the primary (routing), and the
 * built-ins known to leave no session state (anything else — GET_LOCK, stored functions, a name the
 * list does not hold — means the session is reset before reuse).
 */

/** Functions whose SELECTs must run on the primary: locks, waits for positions, generated ids. */
export const WRITING_FUNCTIONS = [
  "get_lock",
  "release_lock",
  "release_all_locks",
  "last_insert_id",
  "master_pos_wait",
  "master_gtid_wait",
  "source_pos_wait",
  "wait_for_executed_gtid_set",
  "wait_until_sql_thread_after_gtids",
];

/**
 * Built-ins a read-only principal may not call: named locks, which hold other principals' work up for
 * as long as the session lasts (an open Data API transaction: minutes), waits for positions, and the
 * server's files (LOAD_FILE, which a login with the FILE privilege could use).
 */
const REFUSED_FOR_READ_ONLY = new Set([
  "get_lock",
  "release_lock",
  "release_all_locks",
  "master_pos_wait",
  "master_gtid_wait",
  "source_pos_wait",
  "wait_for_executed_gtid_set",
  "wait_until_sql_thread_after_gtids",
  "load_file",
]);

export function refusedForReadOnly(name: string): boolean {
  return REFUSED_FOR_READ_ONLY.has(name);
}

/** Built-in functions (and the type names CAST and CONVERT take) that change nothing in the session. */
const STATELESS = new Set(
  `
  abs acos adddate addtime aes_decrypt aes_encrypt any_value ascii asin atan atan2 avg benchmark bin binary bit_and bit_count
  bit_length bit_or bit_xor cast ceil ceiling char char_length character_length charset coalesce coercibility collation
  compress concat concat_ws connection_id conv convert convert_tz cos cot count crc32 cume_dist curdate current_date
  current_role current_time current_timestamp current_user curtime database date date_add date_format date_sub datediff day
  dayname dayofmonth dayofweek dayofyear decimal degrees dense_rank double elt exp export_set extract field find_in_set
  first_value float floor format found_rows from_base64 from_days from_unixtime geomfromtext greatest group_concat hex hour
  ifnull inet6_aton inet6_ntoa inet_aton inet_ntoa insert instr int integer interval is_ipv4 is_ipv6 is_uuid isnull
  json_array json_arrayagg json_contains json_contains_path json_depth json_extract json_insert json_keys json_length
  json_merge json_merge_patch json_merge_preserve json_object json_objectagg json_overlaps json_pretty json_quote
  json_remove json_replace json_search json_set json_table json_type json_unquote json_valid json_value lag last_day
  last_value lcase lead least left length ln localtime localtimestamp locate log log10 log2 lower lpad ltrim make_set
  makedate maketime max md5 microsecond mid min minute mod month monthname nchar now nth_value ntile nullif oct
  octet_length ord percent_rank period_add period_diff pi position pow power quarter quote radians rand rank regexp_instr
  regexp_like regexp_replace regexp_substr repeat replace reverse right round row_count row_number rpad rtrim schema
  sec_to_time second session_user sha sha1 sha2 sign signed sin soundex space sqrt st_astext st_distance st_geomfromtext
  sleep std stddev stddev_pop stddev_samp str_to_date strcmp subdate substr substring substring_index subtime sum sysdate
  system_user tan time time_format time_to_sec timediff timestamp timestampadd timestampdiff to_base64 to_days
  to_seconds trim truncate ucase uncompress unhex unix_timestamp unsigned upper user utc_date utc_time utc_timestamp
  uuid uuid_short uuid_to_bin bin_to_uuid values var_pop var_samp variance varchar version week weekday weekofyear
  year yearweek char_length json_detailed json_compact json_loose nvl nvl2 decode_oracle sys_guid
  `
    .trim()
    .split(/\s+/),
);

export function isStatelessFunction(name: string): boolean {
  return STATELESS.has(name);
}

/**
 * Built-ins whose answer depends only on their arguments (not the session's time zone, the clock or
 * chance): a SELECT calling nothing else may be kept by the result cache (gateway/cache/).
 */
const DETERMINISTIC = new Set(
  `
  abs avg bit_and bit_count bit_length bit_or bit_xor ceil ceiling char_length character_length coalesce concat concat_ws
  count field find_in_set floor greatest group_concat hex ifnull instr json_array json_arrayagg json_contains json_extract
  json_keys json_length json_object json_objectagg json_unquote lcase least left length locate lower lpad ltrim max md5 mid
  min mod nullif octet_length pow power repeat replace reverse right round rpad rtrim sha1 sha2 sign sqrt strcmp substr
  substring substring_index sum trim truncate ucase unhex upper
  `
    .trim()
    .split(/\s+/),
);

export function isDeterministicFunction(name: string): boolean {
  return DETERMINISTIC.has(name);
}

/** Words that read the clock or the session without parentheses (SELECT CURRENT_TIMESTAMP, USER). */
export const SESSION_VALUE_WORDS = new Set([
  "current_date",
  "current_time",
  "current_timestamp",
  "current_user",
  "current_role",
  "localtime",
  "localtimestamp",
  "utc_date",
  "utc_time",
  "utc_timestamp",
]);
