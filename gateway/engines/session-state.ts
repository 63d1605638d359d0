/**
 * What both engines' session-state classifiers share: a verdict per SQL text, remembered (bounded), so
 * the hot path classifies each distinct statement once. The rules themselves are the engine's.
 */

const CACHE_LIMIT = 2048;

/** Wraps an engine's `classify(sql)` (true: may leave session state behind) with a bounded cache. */
export function sessionStateClassifier(classify: (sql: string) => boolean): (sql: string) => boolean {
  const cache = new Map<string, boolean>();
  return (sql) => {
    let verdict = cache.get(sql);
    if (verdict === undefined) {
      verdict = classify(sql);
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(sql, verdict);
    }
    return verdict;
  };
}
