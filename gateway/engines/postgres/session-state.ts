/**
 * Decides whether a statement may leave session state behind (SET, temp tables, advisory locks,
 * prepared statements, LISTEN, cursors...), so the connection is reset before the next caller gets it.
 * Conservative by construction: only single statements that start with a plain DML/query keyword and
 * mention none of the session-changing functions are "clean"; everything else is assumed to change the
 * session. A user function that changes session state from inside a SELECT is not detected.
 */

import { sessionStateClassifier } from "../session-state.js";

const CLEAN_LEADING_KEYWORD = /^(?:\(\s*)*(?:select|insert|update|delete|with|values|table|merge|show|explain)\b/i;
const SESSION_CHANGING_WORDS =
  /\b(?:set_config|pg_advisory_lock|pg_advisory_lock_shared|pg_try_advisory_lock|pg_try_advisory_lock_shared|temp|temporary|lo_open|dblink_connect|dblink_connect_u)\b/i;
const LEADING_COMMENTS_AND_SPACE = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/;

const TRAILING_SEMICOLON_AND_SPACE = /;?\s*$/;

function classify(sql: string): boolean {
  const body = sql.replace(LEADING_COMMENTS_AND_SPACE, "").replace(TRAILING_SEMICOLON_AND_SPACE, "");
  if (!CLEAN_LEADING_KEYWORD.test(body)) return true;
  // Several statements in one string: only the first one was looked at (a ';' in a literal also lands here).
  if (body.includes(";")) return true;
  return SESSION_CHANGING_WORDS.test(body);
}

/** True when running `sql` may change session state that must not reach the next caller. */
export const mayChangeSessionState = sessionStateClassifier(classify);
