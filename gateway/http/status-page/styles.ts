/**
 * The status page's style sheet, inlined into the document (the page's CSP allows no external
 * resources). Colours are CSS variables with a dark variant; every role and state is also written out
 * in words and border styles, so nothing is told by colour alone.
 */
export const STATUS_PAGE_CSS = `
:root {
  color-scheme: light dark;
  --bg: #f6f7f9; --panel: #ffffff; --text: #1b1f24; --muted: #4f5863; --line: #d5dae0;
  --primary: #0b57d0; --primary-bg: #e3ecfd; --replica: #176b3a; --replica-bg: #e2f4e8;
  --unknown: #59616b; --unknown-bg: #eceef1; --bad: #b3261e; --bad-bg: #fce8e6;
  --warn: #8a5300; --warn-bg: #fff0d1; --ok: #176b3a;
  --active: #0b57d0; --idle: #9ec1f7; --waiting: #d9480f; --req: #0b57d0; --c4xx: #b06000; --c5xx: #c5221f;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #111418; --panel: #1b2027; --text: #e8eaed; --muted: #a9b1bb; --line: #39414b;
    --primary: #8ab4f8; --primary-bg: #1c2b45; --replica: #81c995; --replica-bg: #17301f;
    --unknown: #b0b7c0; --unknown-bg: #2a3038; --bad: #f28b82; --bad-bg: #3c1d1b;
    --warn: #fdd663; --warn-bg: #3a2f10; --ok: #81c995;
    --active: #8ab4f8; --idle: #35507a; --waiting: #ff8a50; --req: #8ab4f8; --c4xx: #fdd663; --c5xx: #f28b82;
  }
}
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--text); }
header.top { display: flex; flex-wrap: wrap; align-items: baseline; gap: 8px 24px; padding: 12px 20px; background: var(--panel); border-bottom: 1px solid var(--line); }
h1 { font-size: 20px; margin: 0; }
h2 { font-size: 17px; margin: 0 0 10px; }
h3 { font-size: 13px; margin: 14px 0 8px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
h4 { font-size: 14px; margin: 0; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; word-break: break-all; }
main { padding: 16px 20px 32px; display: grid; gap: 16px; max-width: 1400px; }
table.insights { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
table.insights th, table.insights td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--muted); vertical-align: top; }
table.insights code { font-size: 12px; word-break: break-all; }
dl.facts { display: flex; flex-wrap: wrap; gap: 4px 18px; margin: 0; }
dl.facts div { display: flex; gap: 6px; align-items: baseline; }
dt { color: var(--muted); }
dd { margin: 0; font-variant-numeric: tabular-nums; font-weight: 600; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 700; border: 2px solid transparent; white-space: nowrap; }
.badge.ok { color: var(--ok); border-color: var(--ok); }
.badge.draining { color: var(--warn); background: var(--warn-bg); border-color: var(--warn); }
.conn-box { margin-left: auto; display: flex; gap: 14px; align-items: baseline; white-space: nowrap; }
.conn { color: var(--muted); }
.conn[data-conn="unreachable"], .conn[data-conn="error"] { color: var(--bad); font-weight: 700; }
.notice { padding: 10px 14px; border-radius: 6px; border: 2px solid var(--line); background: var(--panel); }
.notice.bad { border-color: var(--bad); background: var(--bad-bg); color: var(--text); }
.notice.warn { border-color: var(--warn); background: var(--warn-bg); color: var(--text); }
form.token { display: grid; gap: 8px; max-width: 560px; }
form.token label { font-weight: 600; }
form.token .row { display: flex; gap: 8px; }
form.token input { flex: 1; padding: 6px 8px; font: inherit; border: 1px solid var(--muted); border-radius: 4px; background: var(--panel); color: var(--text); }
button { font: inherit; padding: 6px 12px; border-radius: 4px; border: 1px solid var(--primary); background: var(--primary); color: #fff; cursor: pointer; }
button.link { background: none; color: var(--primary); border: none; padding: 0; text-decoration: underline; }
button:focus-visible, input:focus-visible { outline: 3px solid var(--waiting); outline-offset: 1px; }
#dashboard { display: grid; gap: 16px; }
section.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; }
.cluster-head { display: flex; flex-wrap: wrap; gap: 6px 16px; align-items: baseline; margin-bottom: 10px; }
.cluster-head h2 { margin: 0; }
.muted { color: var(--muted); }
.endpoints { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 12px; }
article.endpoint { border: 2px solid var(--line); border-radius: 8px; padding: 10px 12px; display: grid; gap: 6px; }
article.endpoint[data-role="primary"] { border-color: var(--primary); box-shadow: inset 6px 0 0 var(--primary); padding-left: 16px; }
article.endpoint[data-role="replica"] { border-color: var(--replica); }
article.endpoint[data-role="unknown"] { border-style: dashed; border-color: var(--unknown); }
article.endpoint[data-healthy="false"] { background: var(--bad-bg); }
.endpoint-head { display: flex; justify-content: space-between; gap: 8px; align-items: center; }
.role { text-transform: uppercase; }
.role.primary { color: #fff; background: var(--primary); }
.role.replica { color: var(--replica); background: var(--replica-bg); border-color: var(--replica); }
.role.unknown { color: var(--unknown); background: var(--unknown-bg); border: 2px dashed var(--unknown); }
.health.up { color: var(--ok); font-weight: 700; }
.health.down { color: var(--bad); font-weight: 700; }
.ban { color: var(--warn); background: var(--warn-bg); border-left: 4px solid var(--warn); padding: 2px 8px; font-weight: 600; }
.pool { display: grid; gap: 2px; }
.pool .numbers { font-variant-numeric: tabular-nums; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 12px; font-size: 12px; color: var(--muted); }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; border-radius: 2px; vertical-align: -1px; }
svg.chart { width: 100%; height: 56px; display: block; background: var(--bg); border: 1px solid var(--line); border-radius: 4px; }
svg.chart.rates { height: 80px; }
.rate-charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 8px 16px; }
figure.rate-figure { margin: 0; }
.chart-empty { font-size: 12px; color: var(--muted); }
ol.failovers { list-style: none; margin: 0; padding: 0; display: grid; gap: 10px; }
li.failover { border: 1px solid var(--line); border-left: 6px solid var(--ok); border-radius: 6px; padding: 8px 12px; }
li.failover[data-resolved="false"] { border-left-color: var(--bad); background: var(--bad-bg); }
ol.events { margin: 6px 0 0; padding-left: 18px; font-size: 13px; }
ol.events time { font-variant-numeric: tabular-nums; color: var(--muted); margin-right: 6px; }
svg.failover-bar { width: 100%; height: 22px; display: block; margin-top: 6px; }
.rates-now { display: flex; flex-wrap: wrap; gap: 4px 18px; align-items: baseline; margin-bottom: 6px; font-variant-numeric: tabular-nums; }
.stale #dashboard { opacity: .6; }
[hidden] { display: none !important; }
`;
