/**
 * The Data API's named placeholders (`:name`, names may start with a digit: drizzle sends `:1`,
 * kysely-data-api `:0`) rewritten into the engine's positional ones, as its Data API dialect writes
 * them (`$n` once per distinct name on PostgreSQL, `?` per occurrence on MySQL). Only code is looked
 * at — literals, quoted identifiers, comments and dollar-quoted bodies, as the engine's dialect
 * finds them, are copied as they are — and `::` is a cast, `:=` an assignment, not placeholders.
 * Also tells whether the text holds more than one statement.
 */
import type { DataApiDialect } from "../engines/data-api-dialect.js";

export interface ScannedSql {
  /** The SQL with engine placeholders. */
  text: string;
  /** Parameter names in binding order (distinct names, or one per occurrence: as the dialect binds them). */
  names: string[];
  /** A `;` followed by more SQL (comments and whitespace after the last `;` do not count). */
  multipleStatements: boolean;
}

const NAME_CHAR = /[A-Za-z0-9_]/;

/**
 * Scans once. Each placeholder is written by the dialect with `sqlTypeFor(name)` (the type its Field
 * is bound with), unless the SQL casts the placeholder itself.
 */
export function scanNamedParameters(sql: string, dialect: DataApiDialect, sqlTypeFor: (name: string) => string | undefined = () => undefined): ScannedSql {
  const names: string[] = [];
  const indexOf = new Map<string, number>();
  let text = "";
  let sawStatementEnd = false;
  let multipleStatements = false;
  const placeholder = (name: string, castFollows: boolean): string => {
    let index = dialect.repeatedNamesShareAValue ? indexOf.get(name) : undefined;
    if (index === undefined) {
      index = names.length;
      names.push(name);
      indexOf.set(name, index);
    }
    return dialect.placeholder(index + 1, castFollows ? undefined : sqlTypeFor(name));
  };
  for (const segment of dialect.segments(sql)) {
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
