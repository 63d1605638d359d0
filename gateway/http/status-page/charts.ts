/**
 * Browser JavaScript (a string inlined into the status page): the small inline-SVG charts drawn from
 * the status history — each pool's active/idle/waiting as stacked areas against its maximum size, the
 * request and error rates with failovers marked, and one failover's events on a bar.
 * The x axis spans the samples there are (at most the last five minutes), so a page opened on a young
 * gateway still shows a readable chart; its caption says how long a span it covers.
 */
export const CHARTS_JS = String.raw`
var CHART_W = 300;
var WINDOW_MS = 5 * 60 * 1000;

/** The time span to draw: from the oldest sample (at most five minutes back) to the newest. */
function timeWindow(history) {
  if (!history || history.length < 2) return null;
  var t1 = history[history.length - 1].at;
  var t0 = Math.max(history[0].at, t1 - WINDOW_MS);
  if (t1 - t0 < 1) return null;
  return { t0: t0, t1: t1, x: function (at) { return ((Math.min(Math.max(at, t0), t1) - t0) / (t1 - t0)) * CHART_W; } };
}

function spanCaption(win) {
  if (!win) return "collecting data…";
  var seconds = Math.round((win.t1 - win.t0) / 1000);
  return seconds >= 290 ? "last 5 min" : "last " + seconds + " s";
}

function fixed(n) { return Math.round(n * 10) / 10; }

/** Area between two series of y values over the same x values, as an SVG path. */
function bandPath(xs, lower, upper) {
  var d = "M" + fixed(xs[0]) + " " + fixed(upper[0]);
  for (var i = 1; i < xs.length; i++) d += " L" + fixed(xs[i]) + " " + fixed(upper[i]);
  for (var j = xs.length - 1; j >= 0; j--) d += " L" + fixed(xs[j]) + " " + fixed(lower[j]);
  return d + " Z";
}

function linePath(xs, ys) {
  var d = "";
  for (var i = 0; i < xs.length; i++) d += (i === 0 ? "M" : " L") + fixed(xs[i]) + " " + fixed(ys[i]);
  return d;
}

function emptyChart(kind, label) {
  return h("p", { class: "chart-empty", "data-chart": kind, "data-points": 0 }, label + ": collecting data…");
}

/** One pool over time: active (bottom), idle, waiting (top), with the pool's maximum as a dashed line. */
function poolChart(name, history, maxSize) {
  var height = 56;
  var samples = (history || []).filter(function (sample) { return sample.pools && sample.pools[name]; });
  var win = timeWindow(samples);
  if (!win) return emptyChart("pool", "Pool use of " + name);
  samples = samples.filter(function (sample) { return sample.at >= win.t0; });
  var peak = maxSize;
  samples.forEach(function (sample) {
    var p = sample.pools[name];
    peak = Math.max(peak, p.active + p.idle + p.waiting);
  });
  var top = Math.max(1, peak) * 1.08;
  var y = function (v) { return height - (v / top) * height; };
  var xs = samples.map(function (sample) { return win.x(sample.at); });
  var layers = [["active", "var(--active)"], ["idle", "var(--idle)"], ["waiting", "var(--waiting)"]];
  var sums = samples.map(function () { return 0; });
  var paths = layers.map(function (layer) {
    var lower = sums.map(y);
    sums = sums.map(function (sum, i) { return sum + samples[i].pools[name][layer[0]]; });
    return s("path", { d: bandPath(xs, lower, sums.map(y)), fill: layer[1], "data-series": layer[0] });
  });
  var last = samples[samples.length - 1].pools[name];
  var label = "Pool of " + name + ", " + spanCaption(win) + ": now " + last.active + " active, " + last.idle + " idle, " +
    last.waiting + " waiting, maximum " + maxSize;
  return s("svg", {
    class: "chart pool-chart", viewBox: "0 0 " + CHART_W + " " + height, preserveAspectRatio: "none",
    role: "img", "aria-label": label, "data-chart": "pool", "data-points": samples.length,
  },
    s("title", null, label),
    paths,
    s("line", { x1: 0, x2: CHART_W, y1: fixed(y(maxSize)), y2: fixed(y(maxSize)), stroke: "var(--text)", "stroke-width": 1,
      "stroke-dasharray": "4 3", "vector-effect": "non-scaling-stroke", "data-series": "max-size" }));
}

/** Per-second rates from the cumulative counters; a sample closer than 250 ms to the previous is skipped. */
function rateSeries(history) {
  var points = [];
  for (var i = 1; i < history.length; i++) {
    var previous = history[i - 1], current = history[i];
    var seconds = (current.at - previous.at) / 1000;
    if (seconds < 0.25) continue;
    points.push({
      at: current.at,
      requests: Math.max(0, current.requests - previous.requests) / seconds,
      clientErrors: Math.max(0, current.clientErrors - previous.clientErrors) / seconds,
      serverErrors: Math.max(0, current.serverErrors - previous.serverErrors) / seconds,
    });
  }
  return points;
}

/** The rates now: over the last five seconds of history, so one quiet second does not read as zero. */
function currentRates(history) {
  if (!history || history.length < 2) return null;
  var last = history[history.length - 1];
  var reference = history[0];
  for (var i = history.length - 2; i >= 0; i--) {
    reference = history[i];
    if (last.at - history[i].at >= 5000) break;
  }
  var seconds = (last.at - reference.at) / 1000;
  if (seconds <= 0) return null;
  return {
    requests: Math.max(0, last.requests - reference.requests) / seconds,
    clientErrors: Math.max(0, last.clientErrors - reference.clientErrors) / seconds,
    serverErrors: Math.max(0, last.serverErrors - reference.serverErrors) / seconds,
  };
}

/**
 * Rates over time from rateSeries(), one line per entry of series ([key, colour, dash, width]), with
 * every failover in the window shaded. Requests and errors get a chart each: on one scale a few 5xx
 * a second vanish under hundreds of requests.
 */
function ratesChart(kind, title, history, failovers, series) {
  var height = 80;
  var points = rateSeries(history || []);
  var win = timeWindow(points);
  if (!win) return emptyChart(kind, title);
  points = points.filter(function (point) { return point.at >= win.t0; });
  var peak = 0;
  points.forEach(function (p) { series.forEach(function (one) { peak = Math.max(peak, p[one[0]]); }); });
  var top = Math.max(1, peak) * 1.1;
  var y = function (v) { return height - 2 - (v / top) * (height - 4); };
  var xs = points.map(function (point) { return win.x(point.at); });
  var marks = failovers.filter(function (failover) {
    var start = Date.parse(failover.startedAt);
    var end = failover.resolvedAt ? Date.parse(failover.resolvedAt) : win.t1;
    return end >= win.t0 && start <= win.t1;
  }).map(function (failover) {
    var x0 = win.x(Date.parse(failover.startedAt));
    var x1 = win.x(failover.resolvedAt ? Date.parse(failover.resolvedAt) : win.t1);
    return s("rect", { x: fixed(x0), y: 0, width: fixed(Math.max(1.5, x1 - x0)), height: height, fill: "var(--c5xx)",
      "fill-opacity": 0.18, "data-failover-mark": failover.startedAt }, s("title", null, "failover: " + failover.reason));
  });
  var label = title + ", " + spanCaption(win) + "; peak " + formatRate(peak) + " per second";
  return s("svg", {
    class: "chart rates", viewBox: "0 0 " + CHART_W + " " + height, preserveAspectRatio: "none",
    role: "img", "aria-label": label, "data-chart": kind, "data-points": points.length, "data-peak": formatRate(peak),
  },
    s("title", null, label),
    marks,
    series.map(function (one) {
      return s("path", { d: linePath(xs, points.map(function (p) { return y(p[one[0]]); })), fill: "none", stroke: one[1],
        "stroke-width": one[3], "stroke-dasharray": one[2], "vector-effect": "non-scaling-stroke", "stroke-linejoin": "round",
        "data-series": one[0] });
    }));
}

/**
 * One failover's events on a bar from its start to its resolution (or to now while it lasts). Drawn in
 * percentages without a viewBox, so the event dots stay round at any width.
 */
function failoverBar(failover, nowMs) {
  var start = Date.parse(failover.startedAt);
  var end = failover.resolvedAt ? Date.parse(failover.resolvedAt) : nowMs;
  var span = Math.max(1, end - start);
  var pct = function (at) { return fixed(2 + Math.min(1, Math.max(0, (Date.parse(at) - start) / span)) * 96) + "%"; };
  return s("svg", { class: "failover-bar", "aria-hidden": "true" },
    s("line", { x1: "2%", x2: "98%", y1: 11, y2: 11, stroke: failover.resolvedAt ? "var(--ok)" : "var(--bad)", "stroke-width": 3,
      "stroke-dasharray": failover.resolvedAt ? null : "6 4" }),
    failover.timeline.map(function (event) {
      return s("circle", { cx: pct(event.at), cy: 11, r: 5, fill: "var(--panel)", stroke: "var(--text)", "stroke-width": 2 });
    }));
}
`;
