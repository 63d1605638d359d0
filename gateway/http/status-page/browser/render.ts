/**
 * Turns one `GET /v1/admin/status` answer into the page — the header facts, the rates panel, and per
 * cluster its topology, pools and failovers. Markup carries data attributes (data-cluster,
 * data-endpoint, data-role, data-failover, data-field…) so tests assert structure rather than pixels.
 */
import { currentRates, failoverBar, poolChart, poolSamples, ratesChart, spanCaption, timeWindow } from "./charts.js";
import { clockTime, clockTimeMs, type Fact, facts, formatCount, formatMs, formatRate, formatUptime, h } from "./dom.js";
import type { ClusterStatus, EndpointStatus, Failover, Insights, StatusResponse, StatusSample } from "./status-types.js";

const ROLE_TEXT: Record<EndpointStatus["role"], string> = { primary: "primary", replica: "replica", unknown: "role unknown" };

export function renderFacts(status: StatusResponse): Fact[] {
  const totals = status.totals;
  return [
    ["Version", "version", status.version],
    ["Status", "status", h("span", { class: `badge ${status.status === "ok" ? "ok" : "draining"}` }, status.status)],
    ["Uptime", "uptime", formatUptime(status.uptimeS)],
    ["Requests", "requests", formatCount(totals.requests)],
    ["4xx", "client-errors", formatCount(totals.clientErrors)],
    ["5xx", "server-errors", formatCount(totals.serverErrors)],
    ["Retries", "retries", formatCount(totals.retries)],
    ["Failovers", "failovers", formatCount(totals.failovers)],
    ["Cache hit ratio", "cache-hit-ratio", totals.cacheReads > 0 ? `${Math.round((100 * totals.cacheHits) / totals.cacheReads)}%` : "–"],
  ];
}

function allFailovers(status: StatusResponse): Failover[] {
  return Object.values(status.clusters).flatMap((cluster) => cluster.failovers);
}

function swatch(colour: string): HTMLElement {
  return h("i", { style: `background: ${colour}` });
}

/** One rates chart with its scale and legend. */
function rateFigure(chart: Element, legend: HTMLElement[]): HTMLElement {
  const peak = chart.getAttribute("data-peak");
  return h("figure", { class: "rate-figure" }, chart, h("figcaption", { class: "legend" }, peak !== null ? h("span", null, `peak ${peak}/s`) : null, legend));
}

function renderRates(status: StatusResponse): HTMLElement {
  const now = currentRates(status.history);
  const value = (key: "requests" | "clientErrors" | "serverErrors") => (now ? formatRate(now[key]) : "—");
  const failovers = allFailovers(status);
  const failoverKey = () => h("span", null, h("i", { style: "background: var(--c5xx); opacity: .3" }), "failover");
  return h(
    "section",
    { class: "panel", "data-section": "rates", "aria-labelledby": "rates-title" },
    h("h2", { id: "rates-title" }, "Requests and errors"),
    h(
      "div",
      { class: "rates-now" },
      facts([
        ["requests/s", "rate-requests", value("requests")],
        ["4xx/s", "rate-client-errors", value("clientErrors")],
        ["5xx/s", "rate-server-errors", value("serverErrors")],
      ]),
      h("span", { class: "muted" }, spanCaption(timeWindow(status.history))),
    ),
    h(
      "div",
      { class: "rate-charts" },
      rateFigure(ratesChart("rates", "Requests per second", status.history, failovers, [["requests", "var(--req)", null, 2]]), [
        h("span", null, swatch("var(--req)"), "requests/s"),
        failoverKey(),
      ]),
      rateFigure(
        ratesChart("errors", "4xx per second (dashed) and 5xx per second (solid)", status.history, failovers, [
          ["clientErrors", "var(--c4xx)", "5 3", 2],
          ["serverErrors", "var(--c5xx)", null, 2.5],
        ]),
        [h("span", null, swatch("var(--c4xx)"), "4xx/s (dashed)"), h("span", null, swatch("var(--c5xx)"), "5xx/s (solid)"), failoverKey()],
      ),
    ),
  );
}

const INSIGHT_COLUMNS = ["Principal", "Cluster", "Statement", "Calls", "Errors", "Mean", "p99", "Wait", "Database", "Total"];

function insightRow(row: Insights["top"][number]): HTMLElement {
  const errors = Object.values(row.errors).reduce((sum, n) => sum + n, 0);
  return h(
    "tr",
    { "data-insight": row.fingerprint, "data-principal": row.principal, "data-calls": row.calls },
    h("td", null, row.principal || "(any)"),
    h("td", null, row.cluster),
    h("td", null, h("code", { title: row.sample }, row.sample.length > 120 ? `${row.sample.slice(0, 120)}…` : row.sample)),
    h("td", { "data-field": "calls" }, formatCount(row.calls)),
    h("td", { "data-field": "errors", title: Object.keys(row.errors).join(", ") }, formatCount(errors)),
    h("td", null, formatMs(row.meanMs)),
    h("td", null, formatMs(row.p99Ms)),
    h("td", null, formatMs(row.waitMs)),
    h("td", null, formatMs(row.databaseMs)),
    h("td", null, formatMs(row.totalMs)),
  );
}

/** Query insights' top statements: one row per (cluster, principal, fingerprint), most total time first. */
function renderInsights(insights: Insights | undefined): HTMLElement | null {
  if (!insights) return null;
  const minutes = Math.round(insights.windowMs / 60000);
  const caption = `Top statements${minutes > 0 ? ` (last ${minutes} min)` : ""}`;
  const body = !insights.enabled
    ? h("p", { class: "muted" }, "Query insights are off (insights.enabled).")
    : insights.top.length === 0
      ? h("p", { class: "muted" }, "No statements in the window.")
      : h(
          "table",
          { class: "insights" },
          h("thead", null, h("tr", null, INSIGHT_COLUMNS.map((title) => h("th", { scope: "col" }, title)))),
          h("tbody", null, insights.top.map(insightRow)),
        );
  return h("section", { class: "panel", "data-section": "insights", "aria-labelledby": "insights-title" }, h("h2", { id: "insights-title" }, caption), body);
}

function renderPool(endpoint: EndpointStatus, history: readonly StatusSample[]): HTMLElement {
  const pool = endpoint.pool;
  return h(
    "div",
    { class: "pool", "data-pool": endpoint.name, "data-active": pool.active, "data-idle": pool.idle, "data-waiting": pool.waiting, "data-max-size": pool.maxSize },
    h(
      "div",
      { class: "numbers" },
      h("strong", null, "Pool "),
      `${pool.active} active · ${pool.idle} idle · ${pool.waiting} waiting`,
      h("span", { class: "muted" }, ` of max ${pool.maxSize} (${pool.total} open)`),
    ),
    poolChart(endpoint.name, history, pool.maxSize),
    h(
      "div",
      { class: "legend" },
      h("span", null, h("i", { style: "background: var(--active)" }), "active"),
      h("span", null, h("i", { style: "background: var(--idle)" }), "idle"),
      h("span", null, h("i", { style: "background: var(--waiting)" }), "waiting"),
      h("span", null, "- - max size"),
      h("span", null, spanCaption(timeWindow(poolSamples(history, endpoint.name)))),
    ),
  );
}

function renderEndpoint(endpoint: EndpointStatus, cluster: ClusterStatus, history: readonly StatusSample[]): HTMLElement {
  const isPrimary = cluster.primary === endpoint.name;
  const role = endpoint.role in ROLE_TEXT ? endpoint.role : "unknown";
  const lag = role === "primary" ? "— (primary)" : endpoint.healthy ? formatMs(endpoint.lagMs) : "— (not reachable)";
  return h(
    "article",
    {
      class: "endpoint",
      "data-endpoint": endpoint.name,
      "data-role": role,
      "data-healthy": endpoint.healthy,
      "data-banned": endpoint.banned !== null,
      "data-is-primary": isPrimary,
      "aria-label": `${endpoint.name}, ${ROLE_TEXT[role]}`,
    },
    h(
      "div",
      { class: "endpoint-head" },
      h("h4", null, endpoint.name),
      h("span", { class: `badge role ${role}`, "data-field": "role" }, ROLE_TEXT[role] + (isPrimary ? " · takes writes" : "")),
    ),
    facts([
      ["Health", "health", h("span", { class: endpoint.healthy ? "health up" : "health down" }, endpoint.healthy ? "✓ healthy" : "✗ unreachable")],
      ["Lag", "lag", lag],
      ["Outstanding", "outstanding", String(endpoint.outstanding)],
    ]),
    endpoint.banned !== null ? h("p", { class: "ban", "data-field": "ban" }, `Banned from reads: ${endpoint.banned}`) : null,
    !endpoint.healthy && endpoint.lastError ? h("p", { class: "ban", "data-field": "last-error" }, `Last check: ${endpoint.lastError}`) : null,
    endpoint.positionsRefused
      ? h(
          "p",
          { class: "note", "data-field": "positions-refused" },
          `Replication functions refused (SQLSTATE ${endpoint.positionsRefused.sqlstate}): ${endpoint.positionsRefused.message}`,
        )
      : null,
    role === "primary" && !isPrimary ? h("p", { class: "ban" }, "Reports itself primary, but is not the cluster's primary") : null,
    renderPool(endpoint, history),
  );
}

function renderFailover(failover: Failover, nowMs: number): HTMLElement {
  const resolvedAt = failover.resolvedAt;
  const start = Date.parse(failover.startedAt);
  const duration = resolvedAt ? failover.durationMs : nowMs - start;
  return h(
    "li",
    {
      class: "failover",
      "data-failover": failover.startedAt,
      "data-resolved": Boolean(resolvedAt),
      "data-duration-ms": resolvedAt && typeof failover.durationMs === "number" ? failover.durationMs : null,
    },
    h(
      "div",
      null,
      h("strong", null, resolvedAt ? "Resolved" : "In progress"),
      " — ",
      `${failover.oldPrimary || "?"} → ${failover.newPrimary || "(waiting for a primary)"}`,
    ),
    facts([
      ["Started", "started", clockTimeMs(failover.startedAt)],
      ["Resolved", "resolved", resolvedAt ? clockTimeMs(resolvedAt) : "not yet"],
      [resolvedAt ? "Duration" : "Running for", "duration", formatMs(duration)],
    ]),
    h("p", { class: "muted" }, `Reason: ${failover.reason}`),
    failoverBar(failover, nowMs),
    h(
      "ol",
      { class: "events", "aria-label": "Failover events" },
      failover.timeline.map((event) =>
        h("li", { "data-event": event.event }, h("time", { datetime: event.at }, `${clockTimeMs(event.at)} (+${formatMs(Date.parse(event.at) - start)})`), event.event),
      ),
    ),
  );
}

function renderFailovers(cluster: ClusterStatus, nowMs: number): HTMLElement {
  const recent = cluster.failovers.slice(-5).reverse();
  return h(
    "div",
    { "data-section": "failovers" },
    h("h3", null, "Recent failovers"),
    recent.length === 0
      ? h("p", { class: "muted" }, "None since the gateway started.")
      : h("ol", { class: "failovers" }, recent.map((failover) => renderFailover(failover, nowMs))),
  );
}

function noPrimaryBanner(name: string, cluster: ClusterStatus, nowMs: number): HTMLElement {
  const open = cluster.failovers.filter((failover) => !failover.resolvedAt).pop();
  return h(
    "div",
    { class: "notice bad", role: "alert", "data-banner": "no-primary" },
    h("strong", null, `No primary in cluster ${name}: failover in progress. `),
    "Writes wait for a new primary; reads continue on healthy replicas.",
    open ? ` Started ${clockTime(open.startedAt)} (${formatMs(nowMs - Date.parse(open.startedAt))} ago): ${open.reason}` : "",
  );
}

/** idleToZero: every session released so the database may pause — a resting cluster, not an outage. */
function idleBanner(name: string, cluster: ClusterStatus): HTMLElement | null {
  const idle = cluster.idle;
  if (!idle || idle.state === "active") return null;
  const resuming = idle.state === "resuming";
  return h(
    "div",
    { class: "notice", role: "status", "data-banner": "idle", "data-idle-state": idle.state },
    h("strong", null, resuming ? `Cluster ${name} is resuming: ` : `Cluster ${name} is idle, database may be paused. `),
    resuming
      ? `requests wait for the database to resume (since ${clockTime(idle.since)}).`
      : `The gateway released every session at ${clockTime(idle.since)}; the next request resumes it.` +
          (idle.lastResumeMs !== null ? ` Last resume took ${formatMs(idle.lastResumeMs)}.` : ""),
  );
}

function renderCluster(name: string, cluster: ClusterStatus, history: readonly StatusSample[], nowMs: number): HTMLElement {
  const titleId = `cluster-${name.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  return h(
    "section",
    { class: "panel", "data-cluster": name, "data-primary": cluster.primary ?? "", "data-has-primary": cluster.primary !== null, "aria-labelledby": titleId },
    h(
      "div",
      { class: "cluster-head" },
      h("h2", { id: titleId }, `Cluster ${name}`),
      h("span", { class: "muted" }, cluster.engine),
      h("span", { "data-field": "primary" }, cluster.primary ? `primary: ${cluster.primary}` : "no primary"),
      h("span", { class: "muted" }, `${cluster.openTransactions} open transaction${cluster.openTransactions === 1 ? "" : "s"}`),
    ),
    cluster.primary === null ? noPrimaryBanner(name, cluster, nowMs) : null,
    idleBanner(name, cluster),
    h("h3", null, "Topology"),
    h("div", { class: "endpoints" }, cluster.endpoints.map((endpoint) => renderEndpoint(endpoint, cluster, history))),
    renderFailovers(cluster, nowMs),
  );
}

/** The whole dashboard for one status answer. */
export function renderDashboard(status: StatusResponse): HTMLElement[] {
  let nowMs = Date.parse(status.generatedAt);
  if (isNaN(nowMs)) nowMs = Date.now();
  const insights = renderInsights(status.insights);
  const clusters = Object.keys(status.clusters)
    .sort()
    .flatMap((name) => {
      const cluster = status.clusters[name];
      return cluster === undefined ? [] : [renderCluster(name, cluster, status.history, nowMs)];
    });
  return [renderRates(status), ...(insights ? [insights] : []), ...clusters];
}
