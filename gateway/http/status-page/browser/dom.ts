/**
 * Building DOM and SVG nodes, and the number and time formats the status page shows. Every
 * server-provided string reaches the page through `textContent` or `setAttribute` here, never through
 * HTML parsing, so none of it needs escaping.
 */

const SVG_NS = "http://www.w3.org/2000/svg";

/** What h() and s() take as children: nodes, text, nothing (skipped), or lists of them. */
export type Child = Node | string | number | null | undefined | false | readonly Child[];
/** Attributes by name; null and undefined leave one out. */
export type Attrs = Readonly<Record<string, string | number | boolean | null | undefined>> | null;

function appendChildren<T extends Node>(node: T, children: readonly Child[]): T {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) appendChildren(node, child as readonly Child[]);
    else if (typeof child === "object") node.appendChild(child as Node);
    else node.appendChild(document.createTextNode(String(child)));
  }
  return node;
}

function setAttributes<T extends Element>(node: T, attrs: Attrs): T {
  if (!attrs) return node;
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined) continue;
    // data-* and aria-* say "true"/"false"; a boolean HTML attribute (hidden, required) is there or not.
    if (typeof value === "boolean" && !/^(data|aria)-/.test(key)) {
      if (value) node.setAttribute(key, "");
      continue;
    }
    node.setAttribute(key, String(value));
  }
  return node;
}

/** An HTML element: h("p", { "data-x": 1 }, "text", child, [more]). */
export function h(tag: string, attrs: Attrs, ...children: Child[]): HTMLElement {
  return appendChildren(setAttributes(document.createElement(tag), attrs), children);
}

/** An SVG element, same shape as h(). */
export function s(tag: string, attrs: Attrs, ...children: Child[]): SVGElement {
  return appendChildren(setAttributes(document.createElementNS(SVG_NS, tag), attrs), children);
}

/** One row of facts(): its label, its data-field (for tests) and its value. */
export type Fact = readonly [label: string, field: string, value: Child];

/** A <dl> of label/value pairs; each value carries data-field for tests. */
export function facts(pairs: readonly Fact[], attrs?: Attrs): HTMLElement {
  return h(
    "dl",
    Object.assign({ class: "facts" }, attrs ?? {}),
    pairs.map(([label, field, value]) => h("div", null, h("dt", null, label), h("dd", { "data-field": field }, value))),
  );
}

function pad2(n: number): string {
  return (n < 10 ? "0" : "") + n;
}

/** hh:mm:ss in the viewer's time zone. */
export function clockTime(value: string | number): string {
  const date = new Date(value);
  if (isNaN(date.getTime())) return "?";
  return `${pad2(date.getHours())}:${pad2(date.getMinutes())}:${pad2(date.getSeconds())}`;
}

/** hh:mm:ss.mmm: failovers often last less than a second. */
export function clockTimeMs(value: string | number): string {
  const date = new Date(value);
  if (isNaN(date.getTime())) return "?";
  const ms = date.getMilliseconds();
  return `${clockTime(value)}.${ms < 100 ? "0" : ""}${pad2(ms)}`;
}

export function formatUptime(seconds: number): string {
  const s0 = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s0 / 86400);
  const hh = Math.floor((s0 % 86400) / 3600);
  const mm = Math.floor((s0 % 3600) / 60);
  const ss = s0 % 60;
  if (d > 0) return `${d}d ${hh}h ${pad2(mm)}m`;
  if (hh > 0) return `${hh}h ${pad2(mm)}m ${pad2(ss)}s`;
  if (mm > 0) return `${mm}m ${pad2(ss)}s`;
  return `${ss}s`;
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !isFinite(ms)) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
}

export function formatRate(perSecond: number): string {
  if (!isFinite(perSecond)) return "—";
  return perSecond >= 10 ? String(Math.round(perSecond)) : perSecond.toFixed(1);
}

export function formatCount(n: unknown): string {
  return typeof n === "number" ? n.toLocaleString("en-US") : "—";
}
