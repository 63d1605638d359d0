/**
 * What an engine runs: one statement as the gateway decided it, its text and parameters with what the
 * engine's reader said of the text (read once, by the planner or by `Engine.statement`) and the mode
 * it runs in. The engine asks the reader nothing again. Execution's PlannedStatement is this type;
 * work the planner does not plan (the idempotency record's statements, tests) builds its statements
 * with `Engine.statement`, never by hand.
 */
import type { Param } from "../../schemas/query.js";
import type { SqlReader, StatementAnalysis } from "./sql-analysis.js";

/**
 * How a text reaches the server:
 * - "as written": autocommit work; a text the server finds several statements in runs them one by one.
 * - "in gateway transaction": the statement runs in a transaction the gateway began (a batch, an
 *   interactive transaction, a keyed write), which a hidden COMMIT would break. A text of several
 *   statements is sent as text only while the session reads SQL exactly as the engine's reader does
 *   (nothing since its last reset changed settings such as standard_conforming_strings, sql_mode or
 *   the character set); otherwise as one statement, which the server refuses to split.
 * - "one statement": exactly one statement (PostgreSQL's extended protocol, MySQL's prepared
 *   statements), so that the server itself refuses a text holding a second one.
 */
export type TextMode = "as written" | "in gateway transaction" | "one statement";

/** How a statement runs: what the gateway decided about it beyond limits and its timeout (ExecuteOptions). */
export interface StatementMode {
  readonly text: TextMode;
  /**
   * The caller is a read-only principal: besides its READ ONLY transaction, the engine refuses what
   * a transaction does not stop (PostgreSQL: volatile built-in functions that signal other sessions,
   * advance sequences, change settings or take advisory locks); a MySQL stream is prepared.
   */
  readonly readOnlyPrincipal: boolean;
  /**
   * An autocommit write whose caller wants its consistency token: the engine may read the commit
   * position in the statement's own round trip and answer it as StatementResult.commitPosition;
   * where it does not, the caller reads it with commitPosition() afterwards.
   */
  readonly withCommitPosition: boolean;
  /**
   * Every value as the database printed it (PostgreSQL's text output), unconverted and bigNumbers
   * ignored: for surfaces whose clients parse values themselves by type (Neon's and PlanetScale's
   * HTTP protocols). MySQL: text as strings, values of the binary character set (BLOB, BINARY, BIT)
   * as Buffers.
   */
  readonly textValues: boolean;
}

/** One statement for an engine: its text, parameters, the reader's analysis of the text and its mode. */
export interface EngineStatement {
  readonly sql: string;
  readonly params: readonly Param[];
  readonly analysis: StatementAnalysis;
  readonly mode: StatementMode;
}

const TEXT_MODES: readonly TextMode[] = ["as written", "in gateway transaction", "one statement"];

/**
 * Every mode, made once and frozen (3 × 2 × 2 × 2): a plan names one of them, so planning a statement
 * allocates no mode of its own.
 */
const MODES: readonly StatementMode[] = TEXT_MODES.flatMap((text) =>
  [false, true].flatMap((readOnlyPrincipal) =>
    [false, true].flatMap((withCommitPosition) => [false, true].map((textValues) => Object.freeze({ text, readOnlyPrincipal, withCommitPosition, textValues }))),
  ),
);

/** The mode with these fields (the one shared, frozen instance; positional, so that asking allocates nothing). */
export function statementMode(text: TextMode = "as written", readOnlyPrincipal = false, withCommitPosition = false, textValues = false): StatementMode {
  const index = TEXT_MODES.indexOf(text) * 8 + (readOnlyPrincipal ? 4 : 0) + (withCommitPosition ? 2 : 0) + (textValues ? 1 : 0);
  return MODES[index] as StatementMode;
}

/** Autocommit work as written, values converted: the mode of a statement nothing else was decided for. */
export const AS_WRITTEN: StatementMode = statementMode();

/** The same statement, its write's commit position wanted (StatementMode.withCommitPosition). */
export function withCommitPosition(statement: EngineStatement): EngineStatement {
  const { mode } = statement;
  if (mode.withCommitPosition) return statement;
  return { sql: statement.sql, params: statement.params, analysis: statement.analysis, mode: statementMode(mode.text, mode.readOnlyPrincipal, true, mode.textValues) };
}

/** A statement of `sql` as `reader` reads it (cached per text): what Engine.statement answers. */
export function statementOf(reader: SqlReader, sql: string, params: readonly Param[] = [], mode: StatementMode = AS_WRITTEN): EngineStatement {
  return { sql, params, analysis: reader.analyse(sql), mode };
}
