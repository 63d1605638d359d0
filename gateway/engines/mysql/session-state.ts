/**
 * Decides whether a MySQL statement may leave session state behind (SET, USE, temporary tables,
 * LOCK TABLES, GET_LOCK, user variables, PREPARE, an open transaction...), so the connection is reset
 * (COM_RESET_CONNECTION) before the next caller gets it. Conservative by construction, like the
 * PostgreSQL classifier: only single plain DML/query statements that use none of the session-changing
 * words are clean. A stored function that changes session state from inside a SELECT is not detected.
 */

import { sessionStateClassifier } from "../session-state.js";

const CLEAN_LEADING_KEYWORD = /^(?:\(\s*)*(?:select|insert|update|delete|replace|with|values|table|show|explain|describe|desc)\b/i;
/** GET_LOCK and friends, temporary tables, user variables (@name, not @@system), INTO @var. */
const SESSION_CHANGING = /\b(?:get_lock|release_lock|release_all_locks|is_used_lock|temporary|set_config)\b|(?<![@\w])@(?!@)/i;
const LEADING_COMMENTS_AND_SPACE = /^(?:\s+|--[^\n]*(?:\n|$)|#[^\n]*(?:\n|$)|\/\*(?!!)[\s\S]*?\*\/)*/;
const TRAILING_SEMICOLON_AND_SPACE = /;?\s*$/;

function classify(sql: string): boolean {
  const body = sql.replace(LEADING_COMMENTS_AND_SPACE, "").replace(TRAILING_SEMICOLON_AND_SPACE, "");
  if (!CLEAN_LEADING_KEYWORD.test(body)) return true;
  // Several statements in one string: only the first one was looked at (a ';' in a literal also lands here).
  if (body.includes(";")) return true;
  // Version comments (/*!... */) run as SQL on MySQL: treat them as unknown.
  if (body.includes("/*!")) return true;
  return SESSION_CHANGING.test(body);
}

/** True when running `sql` may change session state that must not reach the next caller. */
export const mayChangeSessionState = sessionStateClassifier(classify);
