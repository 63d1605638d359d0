/**
 * Query insights per principal: every answered request's work (the hub's `workRun`, told only while
 * insights.enabled is on) counted by cluster, principal and statement fingerprint (the cluster's SQL
 * reader computes it), in time slices kept for insights.retainMs. A window is read by merging the
 * slices it overlaps; per principal the fingerprints with the most total time are listed, the rest
 * merged into `(other)`. See docs/insights.md.
 */
import { createHash } from "node:crypto";
import type { InsightPrincipal, InsightsResponse, InsightStatement } from "../../schemas/insights.js";
import type { StatusResponse } from "../../schemas/status.js";
import type { Clock } from "../clock.js";
import type { InsightsConfig } from "../config/schema.js";
import type { SqlReader } from "../engines/sql-analysis.js";
import type { StatementFingerprint } from "../engines/statement-fingerprint.js";
import type { GatewayEvents, WorkRun } from "../events.js";
import { InsightSlice, OTHER, OTHER_SAMPLE } from "./insight-slice.js";
import { StatementStats } from "./insight-stats.js";

export interface InsightsFilter {
  principal?: string | undefined;
  cluster?: string | undefined;
  /** Epoch milliseconds. */
  since?: number | undefined;
  until?: number | undefined;
  /** Fingerprints listed per principal; default insights.topPerPrincipal. */
  limit?: number | undefined;
}

/** One (cluster, principal, fingerprint) row with its figures merged over a window. */
export interface InsightRow {
  cluster: string;
  principal: string;
  fingerprint: string;
  stats: StatementStats;
}

const round = (ms: number): number => Math.round(ms * 1000) / 1000;

export class QueryInsights {
  /** Oldest first; the last is the one being filled. */
  private readonly slices: InsightSlice[] = [];

  constructor(
    private readonly settings: InsightsConfig,
    /** The cluster's SQL reader (its fingerprints); undefined for a cluster no longer known. */
    private readonly readerOf: (cluster: string) => SqlReader | undefined,
    private readonly clock: Clock,
    events: GatewayEvents,
  ) {
    if (settings.enabled) events.on("workRun", (run) => this.record(run));
  }

  get enabled(): boolean {
    return this.settings.enabled;
  }

  record(run: WorkRun): void {
    const reader = this.readerOf(run.cluster);
    if (reader === undefined) return;
    const at = this.clock.wallNow();
    this.sliceAt(at).add(run, fingerprintOf(reader, run.statements), at);
  }

  /** The window's rows, per principal the top `limit` by total time and the rest merged into (other). */
  query(filter: InsightsFilter = {}): InsightsResponse {
    const now = this.clock.wallNow();
    const until = filter.until ?? now;
    const since = filter.since ?? now - this.settings.retainMs;
    const slices = this.slices.filter((slice) => slice.endsAt > since && slice.startsAt <= until);
    const principals = new Map<string, { cluster: string; principal: string; rows: Map<string, StatementStats> }>();
    for (const row of this.rows(slices, filter)) {
      const key = `${row.cluster}\n${row.principal}`;
      let entry = principals.get(key);
      if (entry === undefined) principals.set(key, (entry = { cluster: row.cluster, principal: row.principal, rows: new Map() }));
      entry.rows.set(row.fingerprint, row.stats);
    }
    const limit = filter.limit ?? this.settings.topPerPrincipal;
    const listed: InsightPrincipal[] = [...principals.values()].map(({ cluster, principal, rows }) => principalAnswer(cluster, principal, rows, limit));
    listed.sort((a, b) => b.totalMs - a.totalMs);
    return {
      enabled: this.settings.enabled,
      generatedAt: new Date(now).toISOString(),
      since: new Date(slices[0]?.startsAt ?? since).toISOString(),
      until: new Date(until).toISOString(),
      principals: listed,
    };
  }

  /** The `count` rows with the most total time over the last `windowMs`, across clusters and principals (what the metrics export). */
  top(count: number, windowMs: number): InsightRow[] {
    if (count === 0) return [];
    const since = this.clock.wallNow() - windowMs;
    const rows = [...this.rows(this.slices.filter((slice) => slice.endsAt > since), {})];
    rows.sort((a, b) => b.stats.totalMs - a.stats.totalMs);
    return rows.slice(0, count);
  }

  /** The status page's table: the `count` statements with the most total time over insights.metricsWindowMs. */
  statusTop(count: number): StatusResponse["insights"] {
    const top = this.top(count, this.settings.metricsWindowMs).map((row) =>
      Object.assign({ cluster: row.cluster, principal: row.principal }, statementAnswer(row.fingerprint, row.stats)),
    );
    return { enabled: this.settings.enabled, windowMs: this.settings.metricsWindowMs, top };
  }

  /** Every (cluster, principal, fingerprint) of the slices, merged, within the filter's cluster and principal. */
  private *rows(slices: readonly InsightSlice[], filter: InsightsFilter): Iterable<InsightRow> {
    const merged = new Map<string, InsightRow>();
    for (const slice of slices) {
      for (const [cluster, principals] of slice.clusters) {
        if (filter.cluster !== undefined && cluster !== filter.cluster) continue;
        for (const [principal, statements] of principals) {
          if (filter.principal !== undefined && principal !== filter.principal) continue;
          for (const [fingerprint, stats] of statements) {
            const key = `${cluster}\n${principal}\n${fingerprint}`;
            let row = merged.get(key);
            if (row === undefined) merged.set(key, (row = { cluster, principal, fingerprint, stats: new StatementStats(stats.sample) }));
            row.stats.merge(stats);
          }
        }
      }
    }
    yield* merged.values();
  }

  /** The slice `at` falls in, begun if need be; slices older than insights.retainMs are dropped. */
  private sliceAt(at: number): InsightSlice {
    const current = this.slices.at(-1);
    if (current !== undefined && at >= current.startsAt && at < current.endsAt) return current;
    const { sliceMs, retainMs } = this.settings;
    const startsAt = Math.floor(at / sliceMs) * sliceMs;
    const slice = new InsightSlice(startsAt, startsAt + sliceMs, this.settings);
    this.slices.push(slice);
    while (this.slices.length > 0 && (this.slices[0] as InsightSlice).endsAt <= at - retainMs) this.slices.shift();
    return slice;
  }
}

/**
 * The fingerprint of a request's work: its statement's, or for a batch one over its statements' in
 * order (sample: their samples, one per line).
 */
function fingerprintOf(reader: SqlReader, statements: readonly string[]): StatementFingerprint {
  if (statements.length === 1) return reader.fingerprint(statements[0] as string);
  const parts = statements.map((sql) => reader.fingerprint(sql));
  return {
    id: createHash("sha256").update(parts.map(({ id }) => id).join(",")).digest("hex").slice(0, 16),
    sample: parts.map(({ sample }) => `${sample};`).join("\n"),
  };
}

function principalAnswer(cluster: string, principal: string, rows: Map<string, StatementStats>, limit: number): InsightPrincipal {
  const ranked = [...rows.entries()].filter(([id]) => id !== OTHER).sort(([, a], [, b]) => b.totalMs - a.totalMs);
  let other = rows.get(OTHER);
  for (const [, stats] of ranked.slice(limit)) {
    if (other === undefined) other = new StatementStats(OTHER_SAMPLE);
    other.merge(stats);
  }
  const listed = ranked.slice(0, limit);
  if (other !== undefined) listed.push([OTHER, other]);
  let calls = 0;
  let totalMs = 0;
  for (const [, stats] of listed) {
    calls += stats.calls;
    totalMs += stats.totalMs;
  }
  return { cluster, principal, calls, totalMs: round(totalMs), statements: listed.map(([id, stats]) => statementAnswer(id, stats)) };
}

function statementAnswer(fingerprint: string, stats: StatementStats): InsightStatement {
  return {
    fingerprint,
    sample: stats.sample,
    calls: stats.calls,
    errors: Object.fromEntries(stats.errors),
    rows: stats.rows,
    totalMs: round(stats.totalMs),
    meanMs: round(stats.calls === 0 ? 0 : stats.totalMs / stats.calls),
    p99Ms: round(stats.percentileMs(0.99)),
    waitMs: round(stats.waitMs),
    databaseMs: round(stats.databaseMs),
    lastSeen: new Date(stats.lastSeenAt).toISOString(),
  };
}
