/**
 * MySQL's and MariaDB's lexical rules, exactly, for the SQL reader: `#` comments and `--` comments
 * (two dashes then whitespace, a control character or the end) both run to a line feed only; block
 * comments do not nest; `/*! … *\/` always runs as code, `/*!NNNNN … *\/` runs on servers at least
 * that version, and `/*M! … *\/` runs on MariaDB (so those two are read both ways); strings in '…'
 * (and "…" unless ANSI_QUOTES) with doubled quotes and, unless NO_BACKSLASH_ESCAPES, backslash
 * escapes; identifiers in `…`; user variables @name, @'…', @"…", @`…`; system variables @@name.
 * Which reading applies can depend on the session's sql_mode and the server's version, so the
 * reader lexes every combination (`LexMode`) and trusts only what they agree on.
 */

export type TokenKind = "word" | "number" | "string" | "identifier" | "variable" | "system-variable" | "symbol" | "semicolon";

export interface Token {
  kind: TokenKind;
  /** Words in lower case; other tokens as written. */
  text: string;
}

export interface LexMode {
  backslashEscapes: boolean;
  ansiQuotes: boolean;
  /** /*!NNNNN … *\/ runs as code (the server's version is at least NNNNN; else it is a comment). */
  versionedCommentsRun: boolean;
  /** /*M! … *\/ runs as code (MariaDB; MySQL reads a comment). */
  mariadbCommentsRun: boolean;
}

const BOTH = [true, false];

/** Every reading the server might apply to one text: sql_mode's quoting rules, its version, its flavour. */
export const LEX_MODES: readonly LexMode[] = BOTH.flatMap((backslashEscapes) =>
  BOTH.flatMap((ansiQuotes) =>
    BOTH.flatMap((versionedCommentsRun) => BOTH.map((mariadbCommentsRun) => ({ backslashEscapes, ansiQuotes: !ansiQuotes, versionedCommentsRun, mariadbCommentsRun }))),
  ),
);

/** What one reading makes of a text: its tokens, and where the server would fail to read on (if it would). */
export interface Lexed {
  tokens: Token[];
  /** Set when the text cannot be read to its end in this mode; `tokens` then holds what came before. */
  error?: string;
}

class LexError extends Error {}

/** Letters, digits, _ and $, and every non-ASCII character: what MySQL's identifiers and keywords are made of. */
function isWordCode(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95 || code === 36 || code >= 0x80;
}

const isWordChar = (ch: string | undefined): boolean => ch !== undefined && isWordCode(ch.charCodeAt(0));

/** Whitespace or a control character (MySQL's my_isspace or my_iscntrl), or the end of the text. */
function endsDashes(ch: string | undefined): boolean {
  if (ch === undefined) return true;
  const code = ch.charCodeAt(0);
  return code <= 0x20 || code === 0x7f;
}

/** The index after a quoted run starting at `start` (whose quote is sql[start]). */
function quotedEnd(sql: string, start: number, backslashEscapes: boolean): number {
  const quote = sql[start];
  let i = start + 1;
  while (i < sql.length) {
    const ch = sql[i];
    if (backslashEscapes && ch === "\\") i += 2;
    else if (ch === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i++;
  }
  throw new LexError(`unterminated ${quote} quote`);
}

/**
 * The readings that can differ for this text: sql_mode's quoting rules matter only where there is a
 * backslash or a double quote, the version and flavour only where there is an executable comment
 * that depends on them. Most texts have one reading.
 */
export function lexModesFor(sql: string): readonly LexMode[] {
  const backslash = sql.includes("\\");
  const doubleQuote = sql.includes('"');
  const versioned = /\/\*!\d/.test(sql);
  const mariadb = sql.includes("/*M!");
  return LEX_MODES.filter(
    (mode) =>
      (backslash || mode.backslashEscapes) && (doubleQuote || !mode.ansiQuotes) && (versioned || mode.versionedCommentsRun) && (mariadb || mode.mariadbCommentsRun),
  );
}

/**
 * Reads one text in one mode into tokens. Where the server would not know where a token ends (an
 * unterminated quote or comment), the reading stops with an error and the tokens before it.
 */
export function lexMysql(sql: string, mode: LexMode): Lexed {
  const tokens: Token[] = [];
  try {
    readTokens(sql, mode, tokens);
    return { tokens };
  } catch (err) {
    if (err instanceof LexError) return { tokens, error: err.message };
    throw err;
  }
}

function readTokens(sql: string, mode: LexMode, tokens: Token[]): void {
  let executableComment = false;
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i] as string;
    const next = sql[i + 1];
    if (endsDashes(ch) && ch !== "\u007f") {
      i++;
    } else if (ch === "#" || (ch === "-" && next === "-" && endsDashes(sql[i + 2]))) {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? sql.length : end + 1;
    } else if (ch === "/" && next === "*") {
      const opener = /^\/\*(M?)!(\d*)/.exec(sql.slice(i, i + 12));
      if (opener) {
        if (executableComment) throw new LexError("nested executable comment");
        const runs = opener[1] === "M" ? mode.mariadbCommentsRun : opener[2] === "" || mode.versionedCommentsRun;
        if (runs) {
          executableComment = true;
          i += opener[0].length;
          continue;
        }
      }
      const end = sql.indexOf("*/", i + 2);
      if (end < 0) throw new LexError("unterminated comment");
      i = end + 2;
    } else if (executableComment && ch === "*" && next === "/") {
      executableComment = false;
      i += 2;
    } else if (ch === "'" || (ch === '"' && !mode.ansiQuotes)) {
      const end = quotedEnd(sql, i, mode.backslashEscapes);
      tokens.push({ kind: "string", text: sql.slice(i, end) });
      i = end;
    } else if (ch === "`" || ch === '"') {
      const end = quotedEnd(sql, i, false);
      tokens.push({ kind: "identifier", text: sql.slice(i, end) });
      i = end;
    } else if (ch === "@") {
      i = lexVariable(sql, i, mode, tokens);
    } else if (isWordChar(ch)) {
      let end = i + 1;
      while (end < sql.length && isWordCode(sql.charCodeAt(end))) end++;
      const text = sql.slice(i, end);
      const code = ch.charCodeAt(0);
      tokens.push(code >= 48 && code <= 57 ? { kind: "number", text } : { kind: "word", text: text.toLowerCase() });
      i = end;
    } else if (ch === ";") {
      tokens.push({ kind: "semicolon", text: ";" });
      i++;
    } else {
      tokens.push({ kind: "symbol", text: ch });
      i++;
    }
  }
  if (executableComment) throw new LexError("unterminated executable comment");
}

/** @name, @'quoted', @"quoted", @`quoted` (user variables) and @@[scope.]name (system variables). */
function lexVariable(sql: string, start: number, mode: LexMode, tokens: Token[]): number {
  if (sql[start + 1] === "@") {
    let end = start + 2;
    while (end < sql.length && (isWordChar(sql[end]) || sql[end] === ".")) end++;
    tokens.push({ kind: "system-variable", text: sql.slice(start, end).toLowerCase() });
    return end;
  }
  const quote = sql[start + 1];
  if (quote === "'" || quote === '"' || quote === "`") {
    const end = quotedEnd(sql, start + 1, quote !== "`" && mode.backslashEscapes);
    tokens.push({ kind: "variable", text: sql.slice(start, end) });
    return end;
  }
  let end = start + 1;
  while (end < sql.length && (isWordChar(sql[end]) || sql[end] === ".")) end++;
  tokens.push({ kind: "variable", text: sql.slice(start, end) });
  return end;
}

/** Tokens split at semicolons, without empty statements. */
export function splitStatements(tokens: readonly Token[]): Token[][] {
  const statements: Token[][] = [];
  let current: Token[] = [];
  for (const token of tokens) {
    if (token.kind === "semicolon") {
      if (current.length > 0) statements.push(current);
      current = [];
    } else current.push(token);
  }
  if (current.length > 0) statements.push(current);
  return statements;
}
