/**
 * The Data API's named placeholders (`:name`, names may start with a digit: drizzle sends `:1`,
 * kysely-data-api `:0`) rewritten into the engine's positional ones: `$n` on PostgreSQL (one number
 * per distinct name, so a repeated name reuses its value) and `?` on MySQL (the value repeated). Quoted
 * strings and identifiers, comments and PostgreSQL dollar-quoted bodies are skipped; `::` is a cast,
 * not a placeholder, and `:=` (MySQL assignment) is not one either. Also tells whether the text holds
 * more than one statement.
 */

export interface ScannedSql {
  /** The SQL with engine placeholders. */
  text: string;
  /** Parameter names in binding order (PostgreSQL: distinct names; MySQL: one per occurrence). */
  names: string[];
  /** A `;` followed by more SQL. */
  multipleStatements: boolean;
}

const NAME_CHAR = /[A-Za-z0-9_]/;

/**
 * Scans once. On PostgreSQL a repeated name shares one `$n`, and `castFor(name)` (a typeHint's type)
 * is appended to each placeholder that has no cast of its own already.
 */
export function scanNamedParameters(sql: string, engine: "postgres" | "mysql", castFor: (name: string) => string | undefined = () => undefined): ScannedSql {
  const reuseNames = engine === "postgres";
  const backslashEscapes = engine === "mysql";
  const names: string[] = [];
  const indexOf = new Map<string, number>();
  let text = "";
  let i = 0;
  let sawStatementEnd = false;
  let multipleStatements = false;
  const emitPlaceholder = (name: string, castFollows: boolean): void => {
    let index = reuseNames ? indexOf.get(name) : undefined;
    if (index === undefined) {
      index = names.length;
      names.push(name);
      indexOf.set(name, index);
    }
    if (engine === "mysql") {
      text += "?";
      return;
    }
    const cast = castFollows ? undefined : castFor(name);
    text += cast === undefined ? `$${index + 1}` : `$${index + 1}::${cast}`;
  };
  while (i < sql.length) {
    const ch = sql[i] as string;
    const next = sql[i + 1];
    if (!/\s/.test(ch) && ch !== ";" && sawStatementEnd) multipleStatements = true;
    if (ch === "-" && next === "-") {
      const end = sql.indexOf("\n", i);
      const stop = end < 0 ? sql.length : end;
      text += sql.slice(i, stop);
      i = stop;
      continue;
    }
    if (ch === "/" && next === "*") {
      const end = sql.indexOf("*/", i + 2);
      const stop = end < 0 ? sql.length : end + 2;
      text += sql.slice(i, stop);
      i = stop;
      continue;
    }
    if (ch === "#" && engine === "mysql") {
      const end = sql.indexOf("\n", i);
      const stop = end < 0 ? sql.length : end;
      text += sql.slice(i, stop);
      i = stop;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === "`") {
      let j = i + 1;
      while (j < sql.length) {
        if (backslashEscapes && ch !== "`" && sql[j] === "\\") j += 2;
        else if (sql[j] === ch) {
          if (sql[j + 1] === ch) j += 2;
          else break;
        } else j++;
      }
      text += sql.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (ch === "$" && engine === "postgres") {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i, i + 64));
      if (tag) {
        const end = sql.indexOf(tag[0], i + tag[0].length);
        const stop = end < 0 ? sql.length : end + tag[0].length;
        text += sql.slice(i, stop);
        i = stop;
        continue;
      }
    }
    if (ch === ":") {
      if (next === ":") {
        // A cast (::type), possibly right after a placeholder: copy both colons.
        text += "::";
        i += 2;
        continue;
      }
      if (next !== undefined && NAME_CHAR.test(next) && sql[i - 1] !== ":") {
        let j = i + 1;
        while (j < sql.length && NAME_CHAR.test(sql[j] as string)) j++;
        emitPlaceholder(sql.slice(i + 1, j), sql.startsWith("::", j));
        i = j;
        continue;
      }
    }
    if (ch === ";") sawStatementEnd = true;
    text += ch;
    i++;
  }
  return { text, names, multipleStatements };
}
