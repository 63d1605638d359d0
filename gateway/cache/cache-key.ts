/**
 * The one way an entry's key is made: every part that can change a cached answer is a required field,
 * so a caller cannot leave one out. The principal is left out only when the cluster's config says its
 * principals may share answers (then the database login still separates them). The key is the parts'
 * JSON text itself: the memory store uses it as it is (hashing it was 7% of a hit's CPU under
 * `npm run bench -- --profile`), and the Valkey store, whose keys travel, hashes it (valkey-store.ts).
 */
import type { Param } from "../../schemas/query.js";

/** Stands for every principal in the key of a cluster whose principals share answers. */
export const SHARED_BY_PRINCIPALS = Symbol("shared by principals");

export interface CacheKeyParts {
  cluster: string;
  /** The database login whose sessions answer (grants and row-level security follow it). */
  login: string;
  /** The caller's principal (the pool tenant), or SHARED_BY_PRINCIPALS. */
  principal: string | typeof SHARED_BY_PRINCIPALS;
  sql: string;
  params: readonly Param[];
  /** The answer's shape options: the same rows come back differently under each. */
  shape: { rowMode: "object" | "array"; bigNumbers: "string" | "number" };
}

export function cacheKeyOf(parts: CacheKeyParts): string {
  const principal = parts.principal === SHARED_BY_PRINCIPALS ? ["shared"] : ["principal", parts.principal];
  return JSON.stringify([parts.cluster, parts.login, principal, parts.sql, parts.params, parts.shape.rowMode, parts.shape.bigNumbers]);
}
