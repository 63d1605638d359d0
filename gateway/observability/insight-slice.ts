/**
 * One time slice of query insights: per cluster, per principal, up to `topPerPrincipal` fingerprints
 * with their figures, and `(other)` for the statements of further fingerprints; past `maxPrincipals`
 * principals of a cluster, further principals count as principal `(other)`. Memory is bounded by those
 * two numbers (and the sample length), whatever the callers send. A slice starts empty, so a statement
 * that becomes expensive later gets its own row from the next slice on.
 */
import type { WorkRun } from "../events.js";
import type { StatementFingerprint } from "../engines/statement-fingerprint.js";
import { StatementStats } from "./insight-stats.js";

/** The name of what is counted past a limit: no principal or fingerprint can be spelled so. */
export const OTHER = "(other)";
export const OTHER_SAMPLE = "(statements of fingerprints past the per-principal limit)";

export interface SliceLimits {
  topPerPrincipal: number;
  maxPrincipals: number;
}

/** One principal's statements in one slice: fingerprint id → figures. */
export type PrincipalStatements = Map<string, StatementStats>;

export class InsightSlice {
  /** cluster → principal → fingerprint → figures. */
  readonly clusters = new Map<string, Map<string, PrincipalStatements>>();

  constructor(
    readonly startsAt: number,
    readonly endsAt: number,
    private readonly limits: SliceLimits,
  ) {}

  add(run: WorkRun, fingerprint: StatementFingerprint, at: number): void {
    let principals = this.clusters.get(run.cluster);
    if (principals === undefined) this.clusters.set(run.cluster, (principals = new Map<string, PrincipalStatements>()));
    let statements = principals.get(run.principal);
    if (statements === undefined) {
      const name = principals.size < this.limits.maxPrincipals ? run.principal : OTHER;
      statements = principals.get(name);
      if (statements === undefined) principals.set(name, (statements = new Map<string, StatementStats>()));
    }
    let stats = statements.get(fingerprint.id);
    if (stats === undefined) {
      // The limit counts real fingerprints; (other) is the one row beyond it.
      const real = statements.size - (statements.has(OTHER) ? 1 : 0);
      if (real < this.limits.topPerPrincipal) statements.set(fingerprint.id, (stats = new StatementStats(fingerprint.sample)));
      else {
        stats = statements.get(OTHER);
        if (stats === undefined) statements.set(OTHER, (stats = new StatementStats(OTHER_SAMPLE)));
      }
    }
    stats.add(run, at);
  }
}
