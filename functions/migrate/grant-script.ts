/**
 * The README's grant scripts (schemas/grants/<engine>.sql) as the migrator runs them on every deploy:
 * the logins and grants the production setup relies on (function rights taken from PUBLIC, the
 * gateway's idempotency record made and granted to the read-write login only), from the very file the
 * README shows and the tests run, so that the deployment cannot drift from them. The script's names
 * become the deployment's (its logins, its database); its CREATE ROLE / CREATE USER statements are
 * left out, because the migrator creates the logins itself with their secrets' passwords. Every other
 * statement of the scripts can run again (IF NOT EXISTS, GRANT, REVOKE, ALTER DEFAULT PRIVILEGES).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { LoginAccess } from "./migration-engine.js";
import { splitStatements, withoutComments } from "./sql-statements.js";

export type GrantScriptEngine = "postgres" | "mysql";

/** The deployment's names for what the script calls app, poolgate_rw and poolgate_ro. */
export interface GrantNames {
  readonly database: string;
  readonly readWrite: string;
  readonly readOnly: string;
}

/** Thrown for a script that cannot be read or made the deployment's. */
export class GrantScriptError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "GrantScriptError";
  }
}

/** Reads `<directory>/<engine>.sql` (the bundle carries a copy of schemas/grants/). */
export function loadGrantScript(directory: string, engine: GrantScriptEngine): string {
  const path = join(directory, `${engine}.sql`);
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new GrantScriptError(`cannot read the grant script ${path}: ${(err as Error).message}`, { cause: err });
  }
}

const CREATES_LOGIN = /^create\s+(role|user)\b/i;

const quoteIdentifier = {
  postgres: (name: string) => `"${name.replaceAll('"', '""')}"`,
  mysql: (name: string) => `\`${name.replaceAll("`", "``")}\``,
};
const quoteLiteral = (value: string) => `'${value.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;

/** The script's statements with the deployment's names, the logins' creation left out. */
export function grantStatements(engine: GrantScriptEngine, script: string, names: GrantNames): string[] {
  const statements = splitStatements(script)
    .map(withoutComments)
    .filter((statement) => !CREATES_LOGIN.test(statement));
  // A script edited so that a name is no longer recognised must not grant the example's names.
  const stray = statements.find((statement) => /\bpoolgate_r[wo]\b|'\.\.\.'|\bapp\b/.test(renamed(engine, statement, { database: "", readWrite: "", readOnly: "" })));
  if (stray !== undefined) throw new GrantScriptError(`the ${engine} grant script has a statement whose names cannot be made the deployment's: ${stray}`);
  return statements.map((statement) => renamed(engine, statement, names));
}

function renamed(engine: GrantScriptEngine, statement: string, names: GrantNames): string {
  const id = quoteIdentifier[engine];
  return engine === "postgres"
    ? statement
        .replaceAll(/\bDATABASE app\b/g, `DATABASE ${id(names.database)}`)
        .replaceAll(/\bpoolgate_rw\b/g, id(names.readWrite))
        .replaceAll(/\bpoolgate_ro\b/g, id(names.readOnly))
    : statement
        .replaceAll(/\bapp\.\*/g, `${id(names.database)}.*`)
        .replaceAll("'poolgate_rw'@'%'", `${quoteLiteral(names.readWrite)}@'%'`)
        .replaceAll("'poolgate_ro'@'%'", `${quoteLiteral(names.readOnly)}@'%'`);
}

/** The script a run carries, or why there is none (a run built without it would leave the logins half-granted). */
export function requireScript(engine: GrantScriptEngine, script: string | undefined): string {
  if (script === undefined) throw new GrantScriptError(`the run carries no grant script (schemas/grants/${engine}.sql): the logins would lack what the README's setup grants`);
  return script;
}

/** The run's read-write and read-only logins, one of each. */
export function loginNames(logins: readonly { username: string; access: LoginAccess }[]): Omit<GrantNames, "database"> {
  const one = (access: LoginAccess) => {
    const found = logins.filter((login) => login.access === access);
    if (found.length !== 1) throw new GrantScriptError(`the grant script needs exactly one ${access} login; the run has ${found.length}`);
    return (found[0] as { username: string }).username;
  };
  return { readWrite: one("read-write"), readOnly: one("read-only") };
}
