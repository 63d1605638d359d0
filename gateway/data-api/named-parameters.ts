/**
 * The Data API's named placeholders (`:name`, names may start with a digit: drizzle sends `:1`,
 * kysely-data-api `:0`) rewritten into the engine's positional ones: `$n` on PostgreSQL (one number
 * per distinct name, so a repeated name reuses its value) and `?` on MySQL (the value repeated). Only
 * code is looked at — literals, quoted identifiers, comments and dollar-quoted bodies are copied as
 * they are (routing/sql-lexer.ts) — and `::` is a cast, `:=` an assignment, not placeholders. Also tells
 * whether the text holds more than one statement.
 */
import { lexSql } from "../routing/sql-lexer.js";

export interface ScannedSql {
  /** The SQL with engine placeholders. */
  text: string;
  /** Parameter names in binding order (PostgreSQL: distinct names; MySQL: one per occurrence). */
  names: string[];
  /** A `;` followed by more SQL (comments and whitespace after the last `;` do not count). */
  multipleStatements: boolean;
}

const NAME_CHAR = /[A-Za-z0-9_]/;

/**
 * Scans once. On PostgreSQL a repeated name shares one `$n`, and `castFor(name)` (a typeHint's type)
 * is appended to each placeholder that has no cast of its own already.
 */
export function scanNamedParameters(sql: string, engine: "postgres" | "mysql", castFor: (name: string) => string | undefined = () => undefined): ScannedSql {
  const names: string[] = [];
  const indexOf = new Map<string, number>();
  let text = "";
  let sawStatementEnd = false;
  let multipleStatements = false;
  const placeholder = (name: string, castFollows: boolean): string => {
    let index = engine === "postgres" ? indexOf.get(name) : undefined;
    if (index === undefined) {
      index = names.length;
      names.push(name);
      indexOf.set(name, index);
    }
    if (engine === "mysql") return "?";
    const cast = castFollows ? undefined : castFor(name);
    return cast === undefined ? `$${index + 1}` : `$${index + 1}::${cast}`;
  };
  for (const segment of lexSql(sql, engine)) {
    if (segment.kind !== "code") {
      if (segment.kind !== "comment" && sawStatementEnd) multipleStatements = true;
      text += segment.text;
      continue;
    }
    const code = segment.text;
    let i = 0;
    while (i < code.length) {
      const ch = code[i] as string;
      if (sawStatementEnd && ch !== ";" && !/\s/.test(ch)) multipleStatements = true;
      if (ch === ";") sawStatementEnd = true;
      if (ch === ":" && code[i + 1] === ":") {
        text += "::";
        i += 2;
        continue;
      }
      if (ch === ":" && NAME_CHAR.test(code[i + 1] ?? "")) {
        let j = i + 1;
        while (j < code.length && NAME_CHAR.test(code[j] as string)) j++;
        text += placeholder(code.slice(i + 1, j), code.startsWith("::", j));
        i = j;
        continue;
      }
      text += ch;
      i++;
    }
  }
  return { text, names, multipleStatements };
}
