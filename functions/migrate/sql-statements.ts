/**
 * Splits a migration file into its statements and tells DDL from the rest, for Aurora DSQL, which runs
 * one DDL statement per transaction and no DDL with DML ("DDL and distributed transactions", Aurora
 * DSQL User Guide). The splitter knows what can hide a semicolon in PostgreSQL's SQL: quoted strings
 * and identifiers, dollar-quoted bodies and comments.
 */

/** The statements of `sql`, trimmed, comments kept inside them, empty ones dropped. */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  const skipTo = (end: string, from: number) => {
    const at = sql.indexOf(end, from);
    return at === -1 ? sql.length : at + end.length;
  };
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '"') {
      // A doubled quote inside is part of the string: the loop simply reopens it.
      i = skipTo(c, i + 1);
    } else if (c === "-" && sql[i + 1] === "-") {
      i = skipTo("\n", i + 2);
    } else if (c === "/" && sql[i + 1] === "*") {
      i = skipTo("*/", i + 2);
    } else if (c === "$") {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i))?.[0];
      i = tag ? skipTo(tag, i + tag.length) : i + 1;
    } else if (c === ";") {
      statements.push(sql.slice(start, i));
      i += 1;
      start = i;
    } else {
      i += 1;
    }
  }
  statements.push(sql.slice(start));
  return statements.map((statement) => statement.trim()).filter((statement) => withoutComments(statement).length > 0);
}

/** The statement without its comments (a statement's leading comment belongs to the line before it). */
export function withoutComments(statement: string): string {
  return statement.replace(/--[^\n]*/g, "").replace(/\/\*[\s\S]*?\*\//g, "").trim();
}

/** Statements that change the schema or the roles (DSQL's DDL), by their first word. */
const DDL = /^(create|alter|drop|grant|revoke|comment|aws|security)\b/i;

export function isDdl(statement: string): boolean {
  return DDL.test(withoutComments(statement));
}

/**
 * Why Aurora DSQL cannot run this migration file as one transaction, or undefined when it can: a DDL
 * statement must be the file's only statement; DML only may be several statements.
 */
export function dsqlMigrationProblem(sql: string): string | undefined {
  const statements = splitStatements(sql);
  const ddl = statements.filter(isDdl).length;
  if (ddl === 0 || statements.length === 1) return undefined;
  return (
    `it has ${statements.length} statements, ${ddl} of them DDL; Aurora DSQL runs one DDL statement per transaction and no DDL with DML: ` +
    "put each DDL statement in a file of its own (re-runnable: IF NOT EXISTS), and data changes in files without DDL"
  );
}
