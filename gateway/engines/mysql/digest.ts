/**
 * MySQL digests for query insights, in the spirit of performance_schema's statement digests: the
 * lexer's tokens with comments gone, keywords in lower case, every literal (number, string) replaced
 * by `?` and a list of several literals by `...`; the digest is a hash of that normalised text. The
 * text is read in the first lexical mode that reads it to its end (sql_mode's quoting rules only
 * change where a literal ends, not that it is one); a text no mode reads shares one fingerprint.
 */
import { createHash } from "node:crypto";
import { sampleOf, type StatementFingerprint, UNREADABLE } from "../statement-fingerprint.js";
import { lexModesFor, lexMysql, type Token } from "./sql-lexer.js";

/** Tokens never preceded by a space in the normalised text, and those never followed by one. */
const NO_SPACE_BEFORE = new Set([",", ")", "."]);
const NO_SPACE_AFTER = new Set(["(", "."]);
/** Operators the lexer reads a character at a time (its symbols are single characters), written whole again. */
const OPERATORS = new Set(["<>", "<=", ">=", "!=", ":=", "||", "&&", "<<", ">>", "<=>", "->", "->>"]);

function isLiteral(token: Token): boolean {
  return token.kind === "number" || token.kind === "string";
}

/** The tokens as normalised words: literals as `?` (a decimal's two halves as one), runs of `?, ?` as `...`. */
function normalisedWords(tokens: readonly Token[]): string[] {
  const words: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (!isLiteral(token)) {
      words.push(token.text);
      continue;
    }
    // 1.5 lexes as 1 . 5: one literal.
    if (token.kind === "number" && tokens[i + 1]?.text === "." && tokens[i + 2]?.kind === "number") i += 2;
    const listed = words.at(-1) === "," && (words.at(-2) === "?" || words.at(-2) === "...");
    if (listed) {
      words.pop();
      words[words.length - 1] = "...";
    } else words.push("?");
  }
  return words;
}

function joined(words: readonly string[]): string {
  let text = "";
  let previous = "";
  for (const word of words) {
    if (OPERATORS.has(previous + word)) {
      text += word;
      previous += word;
      continue;
    }
    if (text !== "" && !NO_SPACE_BEFORE.has(word) && !NO_SPACE_AFTER.has(previous)) text += " ";
    text += word;
    previous = word;
  }
  return text;
}

export function mysqlFingerprint(sql: string): StatementFingerprint {
  for (const mode of lexModesFor(sql)) {
    const lexed = lexMysql(sql, mode);
    if (lexed.error !== undefined) continue;
    const text = joined(normalisedWords(lexed.tokens));
    return { id: createHash("sha256").update(text).digest("hex").slice(0, 16), sample: sampleOf(text) };
  }
  return UNREADABLE;
}
