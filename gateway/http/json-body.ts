/**
 * Request bodies as JSON, for both surfaces: empty and malformed bodies get their registry codes, and
 * a body nested deeper than MAX_NESTING is refused before it is parsed — recursive code further on
 * (zod's schemas for Data API arrays, parameter encoding) must never meet a structure deep enough to
 * exhaust the stack. The text of each parsed body is kept (weakly) beside it: the caller's own digits of
 * JSON parameters are read from it, and a call forwarded to another task is sent as it came.
 */
import { GatewayError } from "../errors.js";

/** Far beyond any real parameter or Data API arrayValue; far below what recursion survives. */
export const MAX_NESTING = 64;

const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** How many times a character occurs in a text, counting no further than `limit` (found by indexOf, natively). */
function occurrencesUpTo(text: string, char: string, limit: number): number {
  let found = 0;
  for (let at = text.indexOf(char); at !== -1 && found <= limit; at = text.indexOf(char, at + 1)) found++;
  return found;
}

/**
 * Whether JSON text may nest deeper than `limit`: never when it holds no more than `limit` opening
 * brackets and braces in all (strings included), which is every ordinary request, found without a
 * character-by-character scan; otherwise its actual depth decides.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  const braces = occurrencesUpTo(text, "{", limit);
  if (braces + occurrencesUpTo(text, "[", limit - braces) <= limit) return false;
  return nestingDepth(text) > limit;
}

/** The deepest nesting of arrays and objects in JSON text (strings skipped), without recursion. */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) inString = true;
    else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > deepest) deepest = depth;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) depth--;
  }
  return deepest;
}

/** Parses a request body; `prepare` may rewrite the text first (the Data API's 64-bit longValues). */
export function parseJsonBody(text: string, prepare: (text: string) => string = (same) => same): unknown {
  if (text === "") throw new GatewayError("INVALID_REQUEST", "the JSON body is empty");
  if (nestsDeeperThan(text, MAX_NESTING)) {
    throw new GatewayError("INVALID_REQUEST", `the JSON body is nested deeper than ${MAX_NESTING} levels`);
  }
  let body: unknown;
  try {
    body = JSON.parse(prepare(text));
  } catch (err) {
    throw new GatewayError("MALFORMED_JSON", `request body is not valid JSON: ${(err as Error).message}`);
  }
  return body;
}
