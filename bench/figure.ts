/** The bench's figure: BenchResults as chart panels, one per scenario, with the field reports' figures as reference lines. */
import { type BarPanel, PALETTE, type Panel, renderFigure } from "./chart.js";
import { failoverVerdict, num, REFERENCE } from "./report.js";
import type { BenchResults, TargetRow } from "./results.js";

const ms = (v: number) => `${num(v)} ms`;
const errorsDetail = (r: TargetRow) => (r.errorsAllRounds > 0 ? `${num(r.errorsAllRounds, 0)} of ${num(r.requestsAllRounds, 0)} failed` : undefined);

function burstPanel(rows: TargetRow[], engine: string, settings: BenchResults["settings"]): BarPanel {
  return {
    kind: "bars",
    title: `Report 1 · ${settings.burstCallers} callers on a pool of ${settings.poolSize} · ${engine}`,
    subtitle: "latency per request, successful requests only (lower is better); dashed: report 1's slowest request",
    axisLabel: "latency (ms, log scale)",
    log: true,
    series: [
      { name: "p50", color: PALETTE[5] as string },
      { name: "p90", color: PALETTE[0] as string },
      { name: "p99", color: PALETTE[1] as string },
      { name: "max", color: PALETTE[3] as string },
    ],
    groups: rows.map((r) => ({ label: r.target, values: [r.p50, r.p90, r.p99, r.max], detail: errorsDetail(r) })),
    references: [
      { value: REFERENCE.burst.hikariMaxMs, label: "HikariCP max 347 ms" },
      { value: REFERENCE.burst.dbcp2MaxMs, label: "DBCP2 max 22.8 s" },
    ],
    format: ms,
  };
}

function throughputPanel(rows: TargetRow[], engine: string, settings: BenchResults["settings"]): BarPanel {
  return {
    kind: "bars",
    title: `Steady load · ${settings.callers} callers, point selects · ${engine}`,
    subtitle: "requests per second, median round (higher is better)",
    axisLabel: "throughput (requests/s)",
    log: false,
    series: [{ name: "req/s", color: PALETTE[0] as string }],
    groups: rows.map((r) => ({ label: r.target, values: [r.throughput], detail: errorsDetail(r) })),
    format: (v) => num(v, 0),
  };
}

function panelsOf(results: BenchResults): Panel[] {
  const s = results.settings;
  const panels: Panel[] = [];
  if (results.burst?.postgres) panels.push(burstPanel(results.burst.postgres, "PostgreSQL", s));
  if (results.burst?.mysql) panels.push(burstPanel(results.burst.mysql, "MariaDB", s));
  if (results.inserts) {
    const count = results.inserts[0]?.count ?? 0;
    panels.push({
      kind: "bars",
      title: `Report 4 · ${num(count, 0)} sequential inserts · PostgreSQL`,
      subtitle: "cost per insert (lower is better); hatched: new-connection targets, extrapolated from a sample",
      axisLabel: "time per insert (µs, log scale)",
      log: true,
      series: [{ name: "µs per insert", color: PALETTE[2] as string }],
      groups: results.inserts.map((r) => ({ label: r.target, values: [r.perInsertUs], estimated: r.extrapolated })),
      references: [
        { value: (REFERENCE.inserts.hikariMs * 1000) / REFERENCE.inserts.count, label: "report 4 HikariCP 6.4 µs" },
        { value: (REFERENCE.inserts.newConnectionMs * 1000) / REFERENCE.inserts.count, label: "report 4 new conn. 18.3 ms" },
      ],
      format: (v) => `${num(v, v < 100 ? 1 : 0)} µs`,
    });
  }
  if (results.conflicts) {
    const rows = results.conflicts;
    const R = REFERENCE.conflicts;
    panels.push({
      kind: "bars",
      title: `Report 2 · ${s.conflictCallers} concurrent increments of one row · retries`,
      subtitle: `retries per round of ${s.conflictCallers} increments, over ${rows[0]?.rounds ?? 0} rounds (report 2: immediate >20 sometimes, backoff ~10)`,
      axisLabel: "retries per round",
      log: false,
      series: [
        { name: "mean", color: PALETTE[4] as string },
        { name: "max", color: PALETTE[3] as string },
      ],
      groups: rows.map((r) => ({ label: r.target, values: [r.meanRetries, r.maxRetries] })),
      format: (v) => num(v, Number.isInteger(v) ? 0 : 1),
    });
    panels.push({
      kind: "bars",
      title: `Report 2 · time until all ${s.conflictCallers} increments committed`,
      subtitle: `median and p90 over rounds (report 2 on DSQL: immediate ${R.immediateMs} ms, backoff ${R.backoffMs} ms, serial ${R.serialMs} ms)`,
      axisLabel: "time (ms)",
      log: false,
      series: [
        { name: "median", color: PALETTE[0] as string },
        { name: "p90", color: PALETTE[5] as string },
      ],
      groups: rows.map((r) => ({ label: r.target, values: [r.medianMs, r.p90Ms] })),
      format: (v) => `${num(v, 0)} ms`,
    });
  }
  if (results.readScaling && results.readScaling.length > 0) {
    panels.push({
      kind: "bars",
      title: "Report 3 · read scaling through the gateway · PostgreSQL",
      subtitle: `point selects, ${s.callers} callers; every instance on the same ${results.machine.cpus} cores`,
      axisLabel: "throughput (requests/s)",
      log: false,
      series: [{ name: "req/s", color: PALETTE[2] as string }],
      groups: results.readScaling.map((r) => ({
        label: `primary + ${r.replicas} replica${r.replicas === 1 ? "" : "s"}`,
        values: [r.throughput],
        detail: r.errors > 0 ? `${r.errors} errors` : undefined,
      })),
      format: (v) => num(v, 0),
    });
  }
  if (results.throughput?.postgres) panels.push(throughputPanel(results.throughput.postgres, "PostgreSQL", s));
  if (results.throughput?.mysql) panels.push(throughputPanel(results.throughput.mysql, "MariaDB", s));
  for (const engine of results.failover ?? []) {
    panels.push({
      kind: "text",
      title: `Failovers under load on ${engine.engine === "postgres" ? "PostgreSQL" : "MariaDB"} · kill the primary, promote the standby`,
      lines: [...engine.timeline, "", ...wrap(failoverVerdict(engine), 88)],
    });
  }
  return panels;
}

/** Splits a long line at spaces into lines of at most `width` characters (text panels do not wrap). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line.length > 0 && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line.length > 0 ? `${line} ${word}` : word;
  }
  if (line.length > 0) lines.push(line);
  return lines;
}

export function renderBenchFigure(results: BenchResults): string {
  const m = results.machine;
  const subtitle = `${m.cpus} CPUs · node ${m.node} · ${[m.postgres, m.mariadb, m.pgbouncer].filter(Boolean).join(" · ")} · pool size ${results.settings.poolSize} · ${results.startedAt}`;
  return renderFigure("Poolgate against the alternatives: the five field reports on one machine", subtitle, panelsOf(results));
}
