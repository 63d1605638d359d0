/**
 * The small inline-SVG charts drawn from the status history — each pool's active/idle/waiting as
 * stacked areas against its maximum size, the request and error rates with failovers marked, and one
 * failover's events on a bar. The x axis spans the samples there are (at most the last five minutes),
 * so a page opened on a young gateway still shows a readable chart; its caption says how long a span
 * it covers.
 */
import { formatRate, h, s } from "./dom.js";
import type { Failover, StatusSample } from "./status-types.js";

const CHART_W = 300;
const WINDOW_MS = 5 * 60 * 1000;

/** The time span to draw, and where a moment in it falls on the x axis. */
export interface TimeWindow {
  t0: number;
  t1: number;
  x(at: number): number;
}

/** The time span to draw: from the oldest sample (at most five minutes back) to the newest. */
export function timeWindow(history: readonly { at: number }[] | null | undefined): TimeWindow | null {
  const first = history?.[0];
  const last = history?.[history.length - 1];
  if (!history || history.length < 2 || first === undefined || last === undefined) return null;
  const t1 = last.at;
  const t0 = Math.max(first.at, t1 - WINDOW_MS);
  if (t1 - t0 < 1) return null;
  return { t0, t1, x: (at) => ((Math.min(Math.max(at, t0), t1) - t0) / (t1 - t0)) * CHART_W };
}

export function spanCaption(win: TimeWindow | null): string {
  if (!win) return "collecting data…";
  const seconds = Math.round((win.t1 - win.t0) / 1000);
  return seconds >= 290 ? "last 5 min" : `last ${seconds} s`;
}

function fixed(n: number): number {
  return Math.round(n * 10) / 10;
}

/** The value at i of a series the caller built to the same length as another: 0 if it is not. */
function at(values: readonly number[], i: number): number {
  return values[i] ?? 0;
}

/** Area between two series of y values over the same x values, as an SVG path. */
function bandPath(xs: readonly number[], lower: readonly number[], upper: readonly number[]): string {
  let d = `M${fixed(at(xs, 0))} ${fixed(at(upper, 0))}`;
  for (let i = 1; i < xs.length; i++) d += ` L${fixed(at(xs, i))} ${fixed(at(upper, i))}`;
  for (let j = xs.length - 1; j >= 0; j--) d += ` L${fixed(at(xs, j))} ${fixed(at(lower, j))}`;
  return `${d} Z`;
}

function linePath(xs: readonly number[], ys: readonly number[]): string {
  let d = "";
  for (let i = 0; i < xs.length; i++) d += `${i === 0 ? "M" : " L"}${fixed(at(xs, i))} ${fixed(at(ys, i))}`;
  return d;
}

function emptyChart(kind: string, label: string): HTMLElement {
  return h("p", { class: "chart-empty", "data-chart": kind, "data-points": 0 }, `${label}: collecting data…`);
}

type PoolSample = StatusSample["pools"][string];
type PoolLayer = "active" | "idle" | "waiting";

/** The samples that have figures for the pool `name`, each with them. */
export function poolSamples(history: readonly StatusSample[] | null | undefined, name: string): { at: number; pool: PoolSample }[] {
  const samples: { at: number; pool: PoolSample }[] = [];
  for (const sample of history ?? []) {
    const pool = sample.pools[name];
    if (pool !== undefined) samples.push({ at: sample.at, pool });
  }
  return samples;
}

/** One pool over time: active (bottom), idle, waiting (top), with the pool's maximum as a dashed line. */
export function poolChart(name: string, history: readonly StatusSample[] | null | undefined, maxSize: number): Element {
  const height = 56;
  let samples = poolSamples(history, name);
  const win = timeWindow(samples);
  if (!win) return emptyChart("pool", `Pool use of ${name}`);
  samples = samples.filter((sample) => sample.at >= win.t0);
  let peak = maxSize;
  for (const { pool } of samples) peak = Math.max(peak, pool.active + pool.idle + pool.waiting);
  const top = Math.max(1, peak) * 1.08;
  const y = (v: number) => height - (v / top) * height;
  const xs = samples.map((sample) => win.x(sample.at));
  const layers: [PoolLayer, string][] = [
    ["active", "var(--active)"],
    ["idle", "var(--idle)"],
    ["waiting", "var(--waiting)"],
  ];
  let sums = samples.map(() => 0);
  const paths = layers.map(([layer, colour]) => {
    const lower = sums.map(y);
    sums = sums.map((sum, i) => sum + (samples[i]?.pool[layer] ?? 0));
    return s("path", { d: bandPath(xs, lower, sums.map(y)), fill: colour, "data-series": layer });
  });
  const last = samples[samples.length - 1]?.pool ?? { active: 0, idle: 0, waiting: 0 };
  const label =
    `Pool of ${name}, ${spanCaption(win)}: now ${last.active} active, ${last.idle} idle, ` + `${last.waiting} waiting, maximum ${maxSize}`;
  return s(
    "svg",
    {
      class: "chart pool-chart",
      viewBox: `0 0 ${CHART_W} ${height}`,
      preserveAspectRatio: "none",
      role: "img",
      "aria-label": label,
      "data-chart": "pool",
      "data-points": samples.length,
    },
    s("title", null, label),
    paths,
    s("line", {
      x1: 0,
      x2: CHART_W,
      y1: fixed(y(maxSize)),
      y2: fixed(y(maxSize)),
      stroke: "var(--text)",
      "stroke-width": 1,
      "stroke-dasharray": "4 3",
      "vector-effect": "non-scaling-stroke",
      "data-series": "max-size",
    }),
  );
}

/** Per-second rates at one moment. */
export interface Rates {
  requests: number;
  clientErrors: number;
  serverErrors: number;
}
type RatePoint = Rates & { at: number };

function ratesBetween(from: StatusSample, to: StatusSample, seconds: number): Rates {
  return {
    requests: Math.max(0, to.requests - from.requests) / seconds,
    clientErrors: Math.max(0, to.clientErrors - from.clientErrors) / seconds,
    serverErrors: Math.max(0, to.serverErrors - from.serverErrors) / seconds,
  };
}

/** Per-second rates from the cumulative counters; a sample closer than 250 ms to the previous is skipped. */
function rateSeries(history: readonly StatusSample[]): RatePoint[] {
  const points: RatePoint[] = [];
  for (let i = 1; i < history.length; i++) {
    const previous = history[i - 1];
    const current = history[i];
    if (previous === undefined || current === undefined) continue;
    const seconds = (current.at - previous.at) / 1000;
    if (seconds < 0.25) continue;
    points.push(Object.assign({ at: current.at }, ratesBetween(previous, current, seconds)));
  }
  return points;
}

/** The rates now: over the last five seconds of history, so one quiet second does not read as zero. */
export function currentRates(history: readonly StatusSample[] | null | undefined): Rates | null {
  if (!history || history.length < 2) return null;
  const last = history[history.length - 1];
  let reference = history[0];
  for (let i = history.length - 2; i >= 0; i--) {
    reference = history[i];
    if (last !== undefined && reference !== undefined && last.at - reference.at >= 5000) break;
  }
  if (last === undefined || reference === undefined) return null;
  const seconds = (last.at - reference.at) / 1000;
  if (seconds <= 0) return null;
  return ratesBetween(reference, last, seconds);
}

/** One line of a rates chart: which rate, its colour, its dash pattern (null: solid) and its width. */
export type RateLine = readonly [key: keyof Rates, colour: string, dash: string | null, width: number];

/**
 * Rates over time from rateSeries(), one line per entry of `lines`, with every failover in the window
 * shaded. Requests and errors get a chart each: on one scale a few 5xx a second vanish under hundreds
 * of requests.
 */
export function ratesChart(
  kind: string,
  title: string,
  history: readonly StatusSample[] | null | undefined,
  failovers: readonly Failover[],
  lines: readonly RateLine[],
): Element {
  const height = 80;
  let points = rateSeries(history ?? []);
  const win = timeWindow(points);
  if (!win) return emptyChart(kind, title);
  points = points.filter((point) => point.at >= win.t0);
  let peak = 0;
  for (const point of points) for (const [key] of lines) peak = Math.max(peak, point[key]);
  const top = Math.max(1, peak) * 1.1;
  const y = (v: number) => height - 2 - (v / top) * (height - 4);
  const xs = points.map((point) => win.x(point.at));
  const marks = failovers
    .filter((failover) => {
      const start = Date.parse(failover.startedAt);
      const end = failover.resolvedAt ? Date.parse(failover.resolvedAt) : win.t1;
      return end >= win.t0 && start <= win.t1;
    })
    .map((failover) => {
      const x0 = win.x(Date.parse(failover.startedAt));
      const x1 = win.x(failover.resolvedAt ? Date.parse(failover.resolvedAt) : win.t1);
      return s(
        "rect",
        {
          x: fixed(x0),
          y: 0,
          width: fixed(Math.max(1.5, x1 - x0)),
          height,
          fill: "var(--c5xx)",
          "fill-opacity": 0.18,
          "data-failover-mark": failover.startedAt,
        },
        s("title", null, `failover: ${failover.reason}`),
      );
    });
  const label = `${title}, ${spanCaption(win)}; peak ${formatRate(peak)} per second`;
  return s(
    "svg",
    {
      class: "chart rates",
      viewBox: `0 0 ${CHART_W} ${height}`,
      preserveAspectRatio: "none",
      role: "img",
      "aria-label": label,
      "data-chart": kind,
      "data-points": points.length,
      "data-peak": formatRate(peak),
    },
    s("title", null, label),
    marks,
    lines.map(([key, colour, dash, width]) =>
      s("path", {
        d: linePath(
          xs,
          points.map((point) => y(point[key])),
        ),
        fill: "none",
        stroke: colour,
        "stroke-width": width,
        "stroke-dasharray": dash,
        "vector-effect": "non-scaling-stroke",
        "stroke-linejoin": "round",
        "data-series": key,
      }),
    ),
  );
}

/**
 * One failover's events on a bar from its start to its resolution (or to now while it lasts). Drawn in
 * percentages without a viewBox, so the event dots stay round at any width.
 */
export function failoverBar(failover: Failover, nowMs: number): SVGElement {
  const start = Date.parse(failover.startedAt);
  const end = failover.resolvedAt ? Date.parse(failover.resolvedAt) : nowMs;
  const span = Math.max(1, end - start);
  const pct = (when: string) => `${fixed(2 + Math.min(1, Math.max(0, (Date.parse(when) - start) / span)) * 96)}%`;
  return s(
    "svg",
    { class: "failover-bar", "aria-hidden": "true" },
    s("line", {
      x1: "2%",
      x2: "98%",
      y1: 11,
      y2: 11,
      stroke: failover.resolvedAt ? "var(--ok)" : "var(--bad)",
      "stroke-width": 3,
      "stroke-dasharray": failover.resolvedAt ? null : "6 4",
    }),
    failover.timeline.map((event) => s("circle", { cx: pct(event.at), cy: 11, r: 5, fill: "var(--panel)", stroke: "var(--text)", "stroke-width": 2 })),
  );
}
