/**
 * Splits SQL text into code and the parts that are not code — string literals, quoted identifiers,
 * dollar-quoted bodies, comments — by each dialect's rules, for everything that must look at SQL
 * without being fooled by what is inside a literal or comment (the statement classifier, the Data
 * API's placeholder rewriting).
 *
 * PostgreSQL: '…' ('' escapes a quote; E'…' also takes backslash escapes), "…" identifiers, $tag$…$tag$
 * bodies, -- comments (to a line feed or carriage return) and nesting /* *\/ comments. MySQL: '…' and
 * "…" with backslash escapes, `…` identifiers, # and "-- " comments (two dashes then whitespace or a
 * control character; to a line feed), /* *\/ comments — except /*! … *\/ and /*M! … *\/, which MySQL
 * runs as code. The gateway's decisions about SQL come from each engine's SQL reader; this lexer only
 * finds the Data API's placeholders, through each engine's Data API dialect (data-api-dialect.ts).
 */

export type SqlDialect = "postgres" | "mysql";

export type SegmentKind = "code" | "string" | "identifier" | "dollar" | "comment";

export interface Segment {
  kind: SegmentKind;
  text: string;
}

const DOLLAR_TAG = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/;
const IDENTIFIER_CHAR = /[A-Za-z0-9_$]/;
const VERSION_COMMENT_START = /^\/\*M?!\d{0,6}/;

/** The end (exclusive) of a quoted run starting at `start`, whose quote character is sql[start]. */
function quotedEnd(sql: string, start: number, backslashEscapes: boolean): number {
  const quote = sql[start];
  let j = start + 1;
  while (j < sql.length) {
    if (backslashEscapes && sql[j] === "\\") j += 2;
    else if (sql[j] === quote) {
      if (sql[j + 1] === quote) j += 2;
      else return j + 1;
    } else j++;
  }
  return sql.length;
}

/** Where a line comment starting at `start` ends: MySQL at a line feed, PostgreSQL at a line feed or carriage return. */
function lineEnd(sql: string, start: number, mysql: boolean): number {
  for (let i = start; i < sql.length; i++) {
    if (sql[i] === "\n" || (!mysql && sql[i] === "\r")) return i;
  }
  return sql.length;
}

/** The end of a PostgreSQL block comment starting at `start`: they nest. */
function nestedCommentEnd(sql: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql[i] === "/" && sql[i + 1] === "*") {
      depth++;
      i += 2;
    } else if (sql[i] === "*" && sql[i + 1] === "/") {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else i++;
  }
  return sql.length;
}

export function lexSql(sql: string, dialect: SqlDialect): Segment[] {
  const mysql = dialect === "mysql";
  const segments: Segment[] = [];
  let code = "";
  const push = (kind: SegmentKind, text: string): void => {
    if (code.length > 0) {
      segments.push({ kind: "code", text: code });
      code = "";
    }
    segments.push({ kind, text });
  };
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i] as string;
    const next = sql[i + 1];
    const lineComment = (ch === "-" && next === "-" && (!mysql || i + 2 >= sql.length || (sql.charCodeAt(i + 2) <= 0x20 || sql.charCodeAt(i + 2) === 0x7f))) || (mysql && ch === "#");
    if (lineComment) {
      const stop = lineEnd(sql, i, mysql);
      push("comment", sql.slice(i, stop));
      i = stop;
    } else if (ch === "/" && next === "*" && !mysql) {
      const stop = nestedCommentEnd(sql, i);
      push("comment", sql.slice(i, stop));
      i = stop;
    } else if (ch === "/" && next === "*") {
      const version = mysql ? VERSION_COMMENT_START.exec(sql.slice(i, i + 10)) : null;
      if (version) {
        // Runs as code on MySQL: only the markers are dropped (the closing */ is dropped below).
        push("comment", version[0]);
        i += version[0].length;
      } else {
        const end = sql.indexOf("*/", i + 2);
        const stop = end < 0 ? sql.length : end + 2;
        push("comment", sql.slice(i, stop));
        i = stop;
      }
    } else if (mysql && ch === "*" && next === "/") {
      push("comment", "*/");
      i += 2;
    } else if (ch === "'" || ch === '"' || (mysql && ch === "`")) {
      const escapeString = !mysql && ch === "'" && /[Ee]/.test(sql[i - 1] ?? "") && !IDENTIFIER_CHAR.test(sql[i - 2] ?? "");
      const stop = quotedEnd(sql, i, (mysql && ch !== "`") || escapeString);
      push(ch === "'" ? "string" : "identifier", sql.slice(i, stop));
      i = stop;
    } else if (ch === "$" && !mysql && !IDENTIFIER_CHAR.test(sql[i - 1] ?? "")) {
      const tag = DOLLAR_TAG.exec(sql.slice(i, i + 66));
      if (tag) {
        const end = sql.indexOf(tag[0], i + tag[0].length);
        const stop = end < 0 ? sql.length : end + tag[0].length;
        push("dollar", sql.slice(i, stop));
        i = stop;
      } else {
        code += ch;
        i++;
      }
    } else {
      code += ch;
      i++;
    }
  }
  if (code.length > 0) segments.push({ kind: "code", text: code });
  return segments;
}
