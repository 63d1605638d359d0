/**
 * Which generations an entry depends on and which a write bumps (the policy of invalidation; the stores
 * only keep counters). Every write bumps "*", so an entry that depends on "*" is invalid after any write
 * of the cluster. With `invalidation: "tables"` a read of known tables depends on those tables' counters
 * and on "?", which writes of unknown tables (DDL, user functions, every MySQL write) bump.
 */
import type { StatementAnalysis } from "../engines/sql-analysis.js";

export type InvalidationMode = "cluster" | "tables";

export const EVERY_WRITE = "*";
export const UNKNOWN_TABLES = "?";
const tableGeneration = (table: string): string => `t:${table}`;

/** The generations a cached read of `analysis` is valid for. */
export function readDependencies(analysis: StatementAnalysis, mode: InvalidationMode): string[] {
  if (mode === "cluster" || analysis.tables === undefined) return [EVERY_WRITE];
  return [UNKNOWN_TABLES, ...[...new Set(analysis.tables)].sort().map(tableGeneration)];
}

/**
 * The generations work of these statements bumps once it ran (whatever its outcome: a failed write may
 * have been applied), or none when every statement is known to only read and to call only functions
 * known to change nothing.
 */
export function writeDependencies(statements: readonly { analysis: StatementAnalysis }[], mode: InvalidationMode): string[] {
  if (statements.every(({ analysis }) => analysis.intent === "read" && analysis.knownFunctionsOnly)) return [];
  if (mode === "cluster") return [EVERY_WRITE];
  const tables = new Set<string>();
  for (const { analysis } of statements) {
    if (analysis.intent === "read" && analysis.knownFunctionsOnly) continue;
    // A write that names no table is not understood: it counts as one of unknown tables.
    if (analysis.tables === undefined || analysis.tables.length === 0 || !analysis.knownFunctionsOnly) return [EVERY_WRITE, UNKNOWN_TABLES];
    for (const table of analysis.tables) tables.add(table);
  }
  return [EVERY_WRITE, ...[...tables].sort().map(tableGeneration)];
}

/** After an interactive transaction's COMMIT: its statements are not tracked, so it counts as a write of unknown tables. */
export function commitDependencies(mode: InvalidationMode): string[] {
  return mode === "cluster" ? [EVERY_WRITE] : [EVERY_WRITE, UNKNOWN_TABLES];
}
