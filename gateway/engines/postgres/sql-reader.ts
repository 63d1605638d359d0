/**
 * Reads PostgreSQL text with PostgreSQL's own parser (libpg-query: the server's grammar and scanner
 * compiled to WebAssembly), so comments, literals, dollar quotes, `U&` identifiers and `E''` strings
 * are read exactly as the server reads them. Each distinct text is parsed once (sql-analysis.ts caches
 * the answers); a text the parser refuses gets the careful answers.
 */
import { loadModule, parseSync } from "libpg-query";
import { cachedReader, NOT_UNDERSTOOD, type SqlReader, type StatementAnalysis } from "../sql-analysis.js";
import { postgresFingerprint } from "./fingerprint.js";
import { isDeterministicFunction, isNonWritingFunction } from "./known-functions.js";
import { LARGE_TEXT_CHARACTERS, largeTextAnalysis } from "./large-text.js";

// Loaded once, when the engine module is first imported: parsing is synchronous afterwards.
await loadModule();

/** Functions that write, take locks, assign transaction ids or otherwise need the primary. */
const WRITING_FUNCTIONS = [
  "nextval",
  "setval",
  "pg_advisory_lock",
  "pg_advisory_lock_shared",
  "pg_advisory_xact_lock",
  "pg_advisory_xact_lock_shared",
  "pg_try_advisory_lock",
  "pg_try_advisory_lock_shared",
  "pg_try_advisory_xact_lock",
  "pg_try_advisory_xact_lock_shared",
  "txid_current",
  "pg_current_xact_id",
  "pg_notify",
  "set_config",
  "lo_create",
  "lo_import",
  "lo_unlink",
  "lo_put",
  "lo_from_bytea",
  "dblink_exec",
  "pg_switch_wal",
  "pg_create_restore_point",
];

/** Savepoints mark points inside a transaction (ORMs nest with them); they do not begin or end one. */
const INSIDE_TRANSACTION = new Set(["TRANS_STMT_SAVEPOINT", "TRANS_STMT_RELEASE", "TRANS_STMT_ROLLBACK_TO"]);
const MODIFYING = new Set(["InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt"]);
/** Statements whose relations are all RangeVars of their tree: every other kind (DDL, TRUNCATE, COPY...) touches tables it may not name so. */
const NAMES_ITS_TABLES = new Set(["SelectStmt", ...MODIFYING]);
/** DECLARE ... WITH HOLD: the cursor outlives the transaction (CURSOR_OPT_HOLD). */
const CURSOR_OPT_HOLD = 0x0020;

type AstNode = Record<string, unknown>;

/** What one walk of a statement's tree finds. */
interface TreeFacts {
  functions: Set<string>;
  /** A data-modifying statement nested in it (a writing CTE). */
  modifies: boolean;
  /** A locking clause (FOR UPDATE/SHARE) anywhere. */
  locks: boolean;
  /** SELECT ... INTO anywhere. */
  into: boolean;
  /** Relations named (RangeVar), unqualified. */
  tables: Set<string>;
  /** Something whose value is not the data's: CURRENT_TIMESTAMP, CURRENT_USER (SQLValueFunction), TABLESAMPLE. */
  sessionValues: boolean;
}

/** Collects the facts above from every node of the tree, whatever it nests in. */
function walk(value: unknown, facts: TreeFacts): void {
  if (Array.isArray(value)) {
    for (const item of value) walk(item, facts);
    return;
  }
  if (value === null || typeof value !== "object") return;
  // A RangeVar, wrapped ({"RangeVar": ...}) in node lists (FROM) or bare where the field is one (INSERT's, UPDATE's relation).
  const relname = (value as AstNode).relname;
  if (typeof relname === "string") facts.tables.add(relname);
  for (const [key, child] of Object.entries(value as AstNode)) {
    if (key === "FuncCall") {
      const name = (child as { funcname?: { String?: { sval?: string } }[] }).funcname?.at(-1)?.String?.sval;
      if (name !== undefined) facts.functions.add(name);
    } else if (MODIFYING.has(key)) facts.modifies = true;
    else if (key === "lockingClause") facts.locks = true;
    else if (key === "intoClause") facts.into = true;
    else if (key === "SQLValueFunction" || key === "RangeTableSample") facts.sessionValues = true;
    walk(child, facts);
  }
}

/** One statement: its node type, its body, and what its tree holds. */
interface Statement {
  kind: string;
  body: AstNode;
  facts: TreeFacts;
}

function explainAnalyzes(body: AstNode): boolean {
  const options = (body.options as { DefElem?: { defname?: string; arg?: unknown } }[] | undefined) ?? [];
  return options.some((option) => option.DefElem?.defname === "analyze" && !isFalse(option.DefElem.arg));
}

/**
 * EXPLAIN (ANALYZE false): the option's argument spelled as PostgreSQL's parse_bool reads false (a
 * prefix of false or no, off, 0). Anything else counts as true: the careful reading.
 */
function isFalse(arg: unknown): boolean {
  const value = arg as { String?: { sval?: string }; Integer?: { ival?: number } } | undefined;
  if (value?.Integer !== undefined) return (value.Integer.ival ?? 0) === 0;
  const text = value?.String?.sval?.toLowerCase();
  return text !== undefined && /^(?:f|fa|fal|fals|false|n|no|off|0)$/.test(text);
}

/** The statement a node such as EXPLAIN's or DECLARE's `query` holds (with the outer tree's facts). */
function nested(node: unknown, facts: TreeFacts): Statement {
  const [kind, body] = Object.entries((node as AstNode | undefined) ?? {})[0] ?? ["", {}];
  return { kind, body: body as AstNode, facts };
}

/** The statement EXPLAIN ANALYZE would run, or undefined for a plain EXPLAIN (which only plans). */
function executedBy(statement: Statement): Statement | undefined {
  if (statement.kind !== "ExplainStmt") return statement;
  return explainAnalyzes(statement.body) ? nested(statement.body.query, statement.facts) : undefined;
}

function isPlainSelect(statement: Statement): boolean {
  return statement.kind === "SelectStmt" && !statement.facts.into && !statement.facts.modifies;
}

class PostgresStatements {
  constructor(
    private readonly statements: Statement[],
    private readonly writingFunctions: ReadonlySet<string>,
  ) {}

  analysis(): StatementAnalysis {
    const functions = new Set<string>();
    for (const statement of this.statements) for (const name of statement.facts.functions) functions.add(name);
    const endsTransaction = this.statements.some(
      (statement) => statement.kind === "TransactionStmt" && !INSIDE_TRANSACTION.has(String(statement.body.kind)),
    );
    return {
      understood: true,
      statementCount: Math.max(1, this.statements.length),
      intent: this.statements.length > 0 && this.statements.every((statement) => this.onlyReads(statement)) ? "read" : "write",
      endsTransaction,
      transactionControl: endsTransaction,
      // PostgreSQL runs a several-statement string as one implicit transaction: only its own
      // transaction control can commit part of it.
      commitsInParts: endsTransaction,
      readOnlyRefusal: this.readOnlyRefusal(),
      leavesNoState: this.statements.every((statement) => this.leavesNoState(statement)),
      functions: [...functions],
      savepointOnly: this.statements.length === 1 && this.statements[0]?.kind === "TransactionStmt" && INSIDE_TRANSACTION.has(String(this.statements[0].body.kind)),
      tables: this.tables(),
      knownFunctionsOnly: [...functions].every(isNonWritingFunction),
      deterministic: this.deterministic(),
      explicitCommit: this.statements.some((statement) => statement.kind === "TransactionStmt" && statement.body.kind === "TRANS_STMT_COMMIT"),
    };
  }

  /** The relations every statement names, or undefined when one of them is of a kind that may touch others (DDL...). */
  private tables(): string[] | undefined {
    const tables = new Set<string>();
    for (const statement of this.statements) {
      const executed = executedBy(statement) ?? statement;
      if (!NAMES_ITS_TABLES.has(executed.kind)) return undefined;
      for (const name of statement.facts.tables) tables.add(name);
    }
    return [...tables];
  }

  /** One plain SELECT calling only deterministic built-ins, with nothing of the session in it. */
  private deterministic(): boolean {
    const [statement] = this.statements;
    if (this.statements.length !== 1 || statement === undefined || !isPlainSelect(statement)) return false;
    const { facts } = statement;
    return !facts.locks && !facts.sessionValues && [...facts.functions].every(isDeterministicFunction);
  }

  /** Runs on a replica: reads only, takes no row locks, calls no writing function. */
  private onlyReads(statement: Statement): boolean {
    if (statement.kind === "VariableShowStmt") return true;
    const executed = executedBy(statement);
    if (executed === undefined) return true;
    if (!isPlainSelect(executed) || executed.facts.locks) return false;
    return ![...statement.facts.functions].some((name) => this.writingFunctions.has(name));
  }

  /**
   * Known to leave nothing in the session: plain queries and DML (their functions are checked for
   * volatility separately). Utility statements (SET, PREPARE, LISTEN, CREATE TEMP..., DO, CALL),
   * SELECT INTO and open transactions are not.
   */
  private leavesNoState(statement: Statement): boolean {
    if (statement.kind === "VariableShowStmt") return true;
    const executed = executedBy(statement);
    if (executed === undefined) return true;
    return isPlainSelect(executed) || (MODIFYING.has(executed.kind) && !executed.facts.into);
  }

  /** Only statements known to read are a read-only principal's (the database is the first wall). */
  private readOnlyRefusal(): string | undefined {
    for (const statement of this.statements) {
      const reason = this.readOnlyReason(statement);
      if (reason !== undefined) return reason;
    }
    return undefined;
  }

  private readOnlyReason(statement: Statement): string | undefined {
    switch (statement.kind) {
      case "VariableShowStmt":
      case "FetchStmt":
      case "ClosePortalStmt":
        return undefined;
      case "TransactionStmt":
        return INSIDE_TRANSACTION.has(String(statement.body.kind)) ? undefined : "transaction control";
      case "DeclareCursorStmt":
        if ((Number(statement.body.options ?? 0) & CURSOR_OPT_HOLD) !== 0) return "cursors WITH HOLD";
        return this.readOnlyQuery(statement);
      default:
        return this.readOnlyQuery(statement);
    }
  }

  private readOnlyQuery(statement: Statement): string | undefined {
    const executed = statement.kind === "DeclareCursorStmt" ? nested(statement.body.query, statement.facts) : executedBy(statement);
    if (executed === undefined) return undefined; // a plain EXPLAIN only plans
    if (!isPlainSelect(executed)) return `${describeKind(executed.kind)} statements`;
    if (executed.facts.locks) return "row locks (FOR UPDATE/SHARE)";
    return undefined;
  }
}

/** "SelectStmt" -> "SELECT ... INTO", "VariableSetStmt" -> "SET", for error messages. */
function describeKind(kind: string): string {
  const names: Record<string, string> = {
    SelectStmt: "SELECT ... INTO and writing-CTE",
    InsertStmt: "INSERT",
    UpdateStmt: "UPDATE",
    DeleteStmt: "DELETE",
    MergeStmt: "MERGE",
    VariableSetStmt: "SET and RESET",
    DoStmt: "DO",
    CallStmt: "CALL",
    LockStmt: "LOCK",
    CopyStmt: "COPY",
    PrepareStmt: "PREPARE",
    ExecuteStmt: "EXECUTE",
    ListenStmt: "LISTEN",
    NotifyStmt: "NOTIFY",
  };
  return names[kind] ?? kind.replace(/Stmt$/, "").replace(/([a-z])([A-Z])/g, "$1 $2").toUpperCase();
}

function analyse(sql: string, writingFunctions: ReadonlySet<string>): StatementAnalysis {
  if (sql.length > LARGE_TEXT_CHARACTERS) return largeTextAnalysis(sql);
  let parsed: { stmts?: { stmt?: AstNode }[] };
  try {
    parsed = parseSync(sql);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { ...NOT_UNDERSTOOD, readOnlyRefusal: `statements the gateway cannot read (${why})` };
  }
  const statements: Statement[] = [];
  for (const entry of parsed.stmts ?? []) {
    const [kind, body] = Object.entries(entry.stmt ?? {})[0] ?? [];
    if (kind === undefined) continue;
    const facts: TreeFacts = { functions: new Set(), modifies: false, locks: false, into: false, tables: new Set(), sessionValues: false };
    walk(body, facts);
    statements.push({ kind, body: body as AstNode, facts });
  }
  return new PostgresStatements(statements, writingFunctions).analysis();
}

/** A reader for one cluster: the built-in writing functions plus `routing.writingFunctions`. */
export function postgresSqlReader(writingFunctions: readonly string[] = []): SqlReader {
  const names = new Set([...WRITING_FUNCTIONS, ...writingFunctions.map((name) => name.toLowerCase())]);
  return cachedReader((sql) => analyse(sql, names), postgresFingerprint);
}
