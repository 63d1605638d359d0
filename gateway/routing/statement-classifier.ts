/**
 * Infers a statement's intent (read or write) from its text, for routing reads to replicas: ProxySQL's
 * query rules from field report 3 (`^SELECT .* FOR UPDATE` -> writer, `^SELECT` -> reader, the rest ->
 * writer), made safer. Literals, quoted identifiers and comments are blanked before looking, and anything
 * not recognisably read-only is a write: a misrouted read only costs the primary some work, a misrouted
 * write fails on a replica.
 */

import type { Intent } from "../../schemas/query.js";
import { lexSql, type SegmentKind } from "./sql-lexer.js";

export type { Intent };

/** Functions that write, take locks, assign transaction ids or need the primary. */
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
  // MySQL
  "get_lock",
  "release_lock",
  "release_all_locks",
  "last_insert_id",
  "master_pos_wait",
  "master_gtid_wait",
  "source_pos_wait",
  "wait_for_executed_gtid_set",
];

const READ_LEADING = /^(?:select|values|table|show|with)\b/;
const LOCKING_CLAUSE = /\bfor\s+(?:no\s+key\s+update|update|key\s+share|share)\b|\block\s+in\s+share\s+mode\b/;
const SELECT_INTO = /\binto\b/;
const MODIFYING_KEYWORD = /\b(?:insert|update|delete|merge)\b/;
const EXPLAIN = /^explain\b(\s*\([^)]*\))?/;

const BLANKS: Record<Exclude<SegmentKind, "code">, string> = { string: "''", dollar: "''", comment: " ", identifier: '"x"' };

/**
 * Blanks out string literals, quoted identifiers, dollar-quoted bodies and comments (see sql-lexer.ts
 * for each dialect's rules). With `backslashEscapes`, MySQL's rules apply.
 */
export function blankLiteralsAndComments(sql: string, backslashEscapes = false): string {
  return lexSql(sql, backslashEscapes ? "mysql" : "postgres")
    .map((segment) => (segment.kind === "code" ? segment.text : segment.kind === "identifier" && segment.text.startsWith("`") ? "`x`" : BLANKS[segment.kind]))
    .join("");
}

/**
 * Statements that begin or end a transaction. Savepoints (SAVEPOINT, RELEASE, ROLLBACK TO) only mark
 * points inside one, so they are not among them: ORMs nest transactions with them.
 */
const TRANSACTION_CONTROL =
  /^(?:begin|start\s+transaction|commit|end|abort|rollback(?!\s+to\b)|prepare\s+transaction|xa\s|set\s+(?:@@(?:session\.)?|session\s+|local\s+)?autocommit\b)/;

/**
 * MySQL statements that commit the open transaction before they run (DDL other than on temporary
 * tables, LOCK/UNLOCK TABLES, account management...): inside a transaction they end it silently.
 */
const MYSQL_IMPLICIT_COMMIT =
  /^(?:(?:create|drop)\s+(?!temporary\b)|alter\s|rename\s|truncate\s|lock\s+tables?\b|unlock\s+tables?\b|grant\s|revoke\s|install\s|uninstall\s|analyze\s|optimize\s|repair\s|flush\s|reset\s|cache\s+index\b|load\s+index\b)/;

/** Statements that could change a session's transaction access mode or run arbitrary code (PostgreSQL DO). */
const ACCESS_MODE_CHANGE = /^(?:set|reset|do)\b/;

function statementsOf(sql: string, backslashEscapes: boolean): string[] {
  return blankLiteralsAndComments(sql, backslashEscapes)
    .toLowerCase()
    .split(";")
    .map((statement) => statement.trim().replace(/^\(+\s*/, ""));
}

/**
 * Whether any statement in the string starts or ends a transaction (BEGIN, COMMIT, ROLLBACK, XA,
 * SET autocommit...). Such SQL commits part of its work on its own, so it is never run again as a
 * unit, and inside a gateway-managed transaction or batch it is refused.
 */
export function containsTransactionControl(sql: string): boolean {
  let verdict = transactionControlCache.get(sql);
  if (verdict === undefined) {
    // Blanked both ways: a statement counts if either reading of the literals exposes it.
    verdict = [...statementsOf(sql, false), ...statementsOf(sql, true)].some((statement) => TRANSACTION_CONTROL.test(statement));
    if (transactionControlCache.size >= 4096) transactionControlCache.clear();
    transactionControlCache.set(sql, verdict);
  }
  return verdict;
}

const transactionControlCache = new Map<string, boolean>();

export interface ClassifierOptions {
  /** More function names (lower case) that must run on the primary, e.g. user functions that write. */
  writingFunctions?: readonly string[];
  /** MySQL: backslash escapes and backtick-quoted identifiers in literals, and implicit commits. */
  dialect?: "postgres" | "mysql";
}

export class StatementClassifier {
  private readonly writingCall: RegExp;
  private readonly cache = new Map<string, Intent>();
  private readonly backslashEscapes: boolean;
  private readonly implicitCommitCache = new Map<string, boolean>();

  constructor(options: ClassifierOptions = {}) {
    this.backslashEscapes = options.dialect === "mysql";
    const names = [...WRITING_FUNCTIONS, ...(options.writingFunctions ?? [])].map((name) => name.toLowerCase().replace(/[^a-z0-9_]/g, ""));
    this.writingCall = new RegExp(`\\b(?:${names.join("|")})\\s*\\(`);
  }

  /**
   * Whether the SQL ends a transaction it runs in: explicit transaction control, or (MySQL) a statement
   * that commits implicitly. Such SQL is never re-run as a unit and is refused inside gateway-managed
   * transactions and batches.
   */
  endsTransaction(sql: string): boolean {
    if (containsTransactionControl(sql)) return true;
    if (!this.backslashEscapes) return false;
    let verdict = this.implicitCommitCache.get(sql);
    if (verdict === undefined) {
      verdict = statementsOf(sql, true).some((statement) => MYSQL_IMPLICIT_COMMIT.test(statement));
      if (this.implicitCommitCache.size >= 4096) this.implicitCommitCache.clear();
      this.implicitCommitCache.set(sql, verdict);
    }
    return verdict;
  }

  /**
   * Why a read-only principal may not send this SQL, or undefined. The database enforces read-only
   * work (READ ONLY transactions ending in ROLLBACK); this refuses beforehand what could end that
   * transaction or change its access mode: transaction control, implicit commits, SET, RESET and DO.
   */
  refusedForReadOnly(sql: string): string | undefined {
    if (this.endsTransaction(sql)) return "transaction control and statements that commit implicitly";
    const statements = [...statementsOf(sql, false), ...statementsOf(sql, true)];
    if (statements.some((statement) => ACCESS_MODE_CHANGE.test(statement))) return "SET, RESET and DO";
    return undefined;
  }

  /**
   * Whether the SQL may commit part of its work and fail after: it ends a transaction, or (MySQL, in
   * autocommit) holds several statements, each committed on its own. Such SQL is run once, never again.
   */
  commitsInParts(sql: string): boolean {
    if (this.endsTransaction(sql)) return true;
    return this.backslashEscapes && statementsOf(sql, true).filter((statement) => statement.length > 0).length > 1;
  }

  infer(sql: string): Intent {
    let intent = this.cache.get(sql);
    if (intent === undefined) {
      intent = this.classify(sql);
      if (this.cache.size >= 4096) this.cache.clear();
      this.cache.set(sql, intent);
    }
    return intent;
  }

  private classify(sql: string): Intent {
    let text = blankLiteralsAndComments(sql, this.backslashEscapes).toLowerCase().trim().replace(/;\s*$/, "");
    if (text.includes(";")) return "write"; // several statements
    text = text.replace(/^\(+\s*/, "");
    const explain = EXPLAIN.exec(text);
    if (explain) {
      // EXPLAIN ANALYZE runs the statement; plain EXPLAIN only plans it.
      const analyzes = /\banalyze\b/.test(explain[0]) || /^explain\s+analy[sz]e\b/.test(text);
      if (!analyzes) return "read";
      text = text.replace(/^explain\s*(\([^)]*\))?\s*(analy[sz]e\s+)?(verbose\s+)?/, "");
    }
    if (!READ_LEADING.test(text)) return "write";
    if (text.startsWith("show")) return "read";
    if (LOCKING_CLAUSE.test(text) || this.writingCall.test(text)) return "write";
    if (text.startsWith("with") && MODIFYING_KEYWORD.test(text)) return "write";
    if (text.startsWith("select") && SELECT_INTO.test(text)) return "write"; // SELECT ... INTO creates a table
    return "read";
  }
}
