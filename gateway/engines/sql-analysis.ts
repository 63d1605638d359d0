/**
 * What the gateway asks about a SQL text, answered once per distinct text by the engine's own reader
 * (PostgreSQL: the server's grammar through libpg-query; MySQL: a lexer with MySQL's exact rules).
 * Every answer leans to the careful side when the reader does not understand the text: a write, that
 * may leave session state, may end a transaction, is not retried as a unit, and is not for a read-only
 * principal.
 */
import type { Intent } from "../../schemas/query.js";
import { cachedFingerprints, type StatementFingerprint } from "./statement-fingerprint.js";

export interface StatementAnalysis {
  /** The reader understood the whole text; when false, every answer below is the careful one. */
  readonly understood: boolean;
  /** How many statements the server will see in the text (1 when not understood). */
  readonly statementCount: number;
  /** "read" only when every statement is known to only read (routing sends it to a replica). */
  readonly intent: Intent;
  /**
   * Begins or ends a transaction: BEGIN, COMMIT, ROLLBACK, XA..., and on MySQL statements that commit
   * implicitly (DDL, LOCK TABLES...). Refused inside gateway-managed transactions and batches.
   */
  readonly endsTransaction: boolean;
  /** Of those, explicit transaction control (BEGIN, COMMIT, ROLLBACK, XA, SET autocommit), as opposed to implicit commits. */
  readonly transactionControl: boolean;
  /**
   * May commit part of its work and then fail (it ends a transaction, or holds several statements
   * that commit one by one): never run again as a unit.
   */
  readonly commitsInParts: boolean;
  /** Why a read-only principal may not send it (only known reads are allowed), or undefined. */
  readonly readOnlyRefusal: string | undefined;
  /**
   * Known to leave no session state behind, provided the functions it calls are not volatile
   * (PostgreSQL checks `functions` against pg_proc). False: the session is reset before reuse.
   */
  readonly leavesNoState: boolean;
  /** Functions the text calls by name, as the server resolves them (for volatility checks). */
  readonly functions: readonly string[];
  /**
   * Exactly one SAVEPOINT, RELEASE or ROLLBACK TO statement and nothing that could hide another: MySQL
   * cannot prepare these, so they are the one statement kind sent as text inside a transaction.
   */
  readonly savepointOnly: boolean;
  /**
   * Every relation the text names (tables, views, CTE names), unqualified: what a write may change and
   * a read depends on. Undefined when the reader cannot list them (DDL and other utility statements,
   * texts it reads only roughly, every MySQL text): a write of unknown tables.
   */
  readonly tables: readonly string[] | undefined;
  /** Calls only the engine's built-in functions known to change nothing: the text touches no relation it does not name. */
  readonly knownFunctionsOnly: boolean;
  /**
   * One plain SELECT whose answer depends only on the data it names and its parameters: no locking
   * clause, no session or system variables, no clock, random or user function (only built-ins known to
   * be deterministic). What the result cache may keep.
   */
  readonly deterministic: boolean;
  /**
   * A COMMIT (or END) sent as SQL: on PostgreSQL it rolls back a transaction an earlier statement
   * failed in, answering ROLLBACK without an error. Told only by the PostgreSQL reader.
   */
  readonly explicitCommit?: boolean;
  /**
   * The text is exactly one BEGIN / START TRANSACTION, COMMIT or ROLLBACK (no chain, release or
   * savepoint), for surfaces whose clients send transaction control as SQL and the gateway runs it as
   * an interactive transaction (PlanetScale's). Told only by the MySQL reader.
   */
  readonly transactionStatement?: TransactionStatement;
}

/** A transaction's own control statement, as TransactionStatement names it. */
export type TransactionStatement = { readonly verb: "begin"; readonly readOnly: boolean } | { readonly verb: "commit" } | { readonly verb: "rollback" };

export interface SqlReader {
  analyse(sql: string): StatementAnalysis;
  /** The text's fingerprint and literal-free sample, for query insights (computed only when asked). */
  fingerprint(sql: string): StatementFingerprint;
}

/** The careful answer for a text the reader does not understand. */
export const NOT_UNDERSTOOD: StatementAnalysis = Object.freeze({
  understood: false,
  statementCount: 1,
  intent: "write",
  endsTransaction: true,
  transactionControl: true,
  commitsInParts: true,
  readOnlyRefusal: "statements the gateway cannot read",
  leavesNoState: false,
  functions: Object.freeze([]),
  savepointOnly: false,
  tables: undefined,
  knownFunctionsOnly: false,
  deterministic: false,
});

/**
 * Distinct texts remembered per reader, and their characters in all: the hot path analyses each text
 * once, and a caller sending many large distinct texts cannot make the cache hold more than this.
 */
const CACHE_ENTRIES = 4096;
const CACHE_CHARACTERS = 4 * 1024 * 1024;

/** Wraps an analysis function (and a fingerprint function) with bounded caches keyed by the exact text. */
export function cachedReader(analyse: (sql: string) => StatementAnalysis, fingerprint: (sql: string) => StatementFingerprint): SqlReader {
  const cache = new Map<string, StatementAnalysis>();
  let characters = 0;
  return {
    fingerprint: cachedFingerprints(fingerprint),
    analyse(sql) {
      let analysis = cache.get(sql);
      if (analysis === undefined) {
        analysis = analyse(sql);
        if (cache.size >= CACHE_ENTRIES || characters + sql.length > CACHE_CHARACTERS) {
          cache.clear();
          characters = 0;
        }
        if (sql.length <= CACHE_CHARACTERS / 4) {
          cache.set(sql, analysis);
          characters += sql.length;
        }
      }
      return analysis;
    },
  };
}
