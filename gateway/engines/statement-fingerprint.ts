/**
 * A statement's fingerprint: what texts that differ only in their literals (and, where the engine's
 * reader can tell, in the length of a list of them) have in common, for query insights. The engine's
 * reader computes it (PostgreSQL: libpg-query's fingerprint and normalised text; MySQL: a digest of the
 * lexer's tokens with literals replaced), once per distinct text, and only when something asks: the
 * hot path never pays for it while insights are off.
 */

export interface StatementFingerprint {
  /** Equal for texts that differ only in literals (hex). */
  readonly id: string;
  /** The text with every literal replaced by a placeholder (never a value), cut to SAMPLE_CHARACTERS. */
  readonly sample: string;
}

/** The longest sample kept: the start of a statement says what it is. */
export const SAMPLE_CHARACTERS = 1000;

/** Every text the reader cannot read shares one fingerprint: its literals cannot be found, so none of it is shown. */
export const UNREADABLE: StatementFingerprint = Object.freeze({ id: "unreadable", sample: "(text the gateway's SQL reader cannot read)" });

export function sampleOf(text: string): string {
  return text.length <= SAMPLE_CHARACTERS ? text : `${text.slice(0, SAMPLE_CHARACTERS)}…`;
}

/** Distinct texts whose fingerprints are remembered, and their characters in all (as the analyses' cache). */
const CACHE_ENTRIES = 4096;
const CACHE_CHARACTERS = 4 * 1024 * 1024;

/** Wraps a fingerprint function with a bounded cache keyed by the exact text. */
export function cachedFingerprints(compute: (sql: string) => StatementFingerprint): (sql: string) => StatementFingerprint {
  const cache = new Map<string, StatementFingerprint>();
  let characters = 0;
  return (sql) => {
    let found = cache.get(sql);
    if (found !== undefined) return found;
    found = compute(sql);
    if (cache.size >= CACHE_ENTRIES || characters + sql.length > CACHE_CHARACTERS) {
      cache.clear();
      characters = 0;
    }
    if (sql.length <= CACHE_CHARACTERS / 4) {
      cache.set(sql, found);
      characters += sql.length;
    }
    return found;
  };
}
