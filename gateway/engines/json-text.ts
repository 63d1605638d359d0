/**
 * JSON text kept as text, in both directions, so that no number passes through a JavaScript double:
 *   - `JsonText`: a json/jsonb/JSON value as the database printed it. The engines hand it on unparsed;
 *     the native API embeds the text in its answer, the Data API compacts it into a stringValue.
 *   - parameter sources: the caller's own text of an object or array parameter, found in the request
 *     body (`jsonValueSources`) and carried on the parsed parameter (`withJsonSource`), so the engines
 *     bind exactly what the caller wrote (`{"id": 9007199254740993}` stays ...993).
 * The scanners here assume text that JSON.parse has already accepted: they find spans, they do not
 * validate.
 */

/** A JSON value as the database printed it: `text` is valid JSON with every digit the database stored. */
export class JsonText {
  constructor(readonly text: string) {}

  /** Only for code that does not know JsonText (logs, debugging): parsing may round large numbers. */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

const SOURCE = Symbol("poolgate.jsonSource");

/** Attaches the caller's own JSON text to a parsed object or array parameter (not enumerable, not copied). */
export function withJsonSource<T extends object>(value: T, source: string): T {
  Object.defineProperty(value, SOURCE, { value: source, enumerable: false, configurable: true });
  return value;
}

/** The caller's own JSON text of a parameter, when the HTTP layer found it. */
export function jsonSourceOf(value: object): string | undefined {
  const source = (value as { [SOURCE]?: unknown })[SOURCE];
  return typeof source === "string" ? source : undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** The index just past the string that starts at `start` (a quote). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === BACKSLASH) i += 2;
    else if (code === QUOTE) return i + 1;
    else i++;
  }
  return i;
}

/** JSON text without the whitespace between tokens (strings and numbers are copied as they are). */
export function compactJson(text: string): string {
  let out = "";
  let from = 0;
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      i = stringEnd(text, i);
    } else if (isWhitespace(code)) {
      out += text.slice(from, i);
      while (i < text.length && isWhitespace(text.charCodeAt(i))) i++;
      from = i;
    } else {
      i++;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/** One container being walked. */
interface Frame {
  kind: "array" | "object";
  /** The current element's index (arrays) or key (objects). */
  key: string | number;
}

/**
 * Walks JSON text once (no recursion, whatever the nesting) and reports the source span of every
 * value whose path `wanted` accepts: `wanted(["params", 0])` for the first element of a top-level
 * `params` array. Values inside a reported value are not reported. A key that occurs twice reports
 * both; the later one is the one JSON.parse keeps.
 */
export function jsonValueSources(text: string, wanted: (path: readonly (string | number)[]) => boolean, found: (path: readonly (string | number)[], source: string) => void): void {
  const stack: Frame[] = [];
  const path: (string | number)[] = [];
  /** Depth of the value being reported (its text is taken when its container moves on), or -1. */
  let reporting = -1;
  let reportStart = 0;
  let i = 0;
  const startValue = (at: number): boolean => {
    if (reporting >= 0) return false;
    if (stack.length > 0 && wanted(path)) {
      reporting = stack.length;
      reportStart = at;
      return true;
    }
    return false;
  };
  const endValue = (end: number): void => {
    if (reporting === stack.length) {
      found(path, text.slice(reportStart, end));
      reporting = -1;
    }
  };
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (isWhitespace(code)) {
      i++;
      continue;
    }
    const top = stack[stack.length - 1];
    if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      startValue(i);
      stack.push({ kind: code === OPEN_BRACE ? "object" : "array", key: 0 });
      path.push(0);
      i++;
      continue;
    }
    if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      stack.pop();
      path.pop();
      i++;
      endValue(i);
      continue;
    }
    if (code === COMMA) {
      if (top?.kind === "array") {
        top.key = (top.key as number) + 1;
        path[path.length - 1] = top.key;
      }
      i++;
      continue;
    }
    if (code === COLON) {
      i++;
      continue;
    }
    if (code === QUOTE) {
      const end = stringEnd(text, i);
      if (top?.kind === "object" && isKeyPosition(text, end)) {
        const raw = text.slice(i, end);
        top.key = raw.includes("\\") ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        path[path.length - 1] = top.key;
        i = end;
        continue;
      }
      const reported = startValue(i);
      i = end;
      if (reported) endValue(i);
      continue;
    }
    // A number or a literal (true, false, null).
    let end = i + 1;
    while (end < text.length) {
      const next = text.charCodeAt(end);
      if (next === COMMA || next === CLOSE_BRACE || next === CLOSE_BRACKET || isWhitespace(next)) break;
      end++;
    }
    const reported = startValue(i);
    i = end;
    if (reported) endValue(i);
  }
}

/** Whether the string that ended at `end` is an object key (a colon follows). */
function isKeyPosition(text: string, end: number): boolean {
  let j = end;
  while (j < text.length && isWhitespace(text.charCodeAt(j))) j++;
  return text.charCodeAt(j) === COLON;
}

/** The source text of each element of a JSON array text (`[1, "a", [2]]` -> `1`, `"a"`, `[2]`). */
export function jsonArrayElements(arrayText: string): string[] {
  const elements: string[] = [];
  jsonValueSources(
    arrayText,
    (path) => path.length === 1,
    (_path, source) => elements.push(source),
  );
  return elements;
}
