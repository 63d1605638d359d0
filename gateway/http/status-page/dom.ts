/**
 * Browser JavaScript (a string inlined into the status page): building DOM and SVG nodes, and the
 * number and time formats the page shows. Every server-provided string reaches the page through
 * `textContent` or `setAttribute` here, never through HTML parsing, so none of it needs escaping.
 * Written without template literals so that this TypeScript template string stays plain.
 */
export const DOM_JS = String.raw`
var SVG_NS = "http://www.w3.org/2000/svg";

function appendChildren(node, children) {
  for (var i = 0; i < children.length; i++) {
    var child = children[i];
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) appendChildren(node, child);
    else if (typeof child === "object") node.appendChild(child);
    else node.appendChild(document.createTextNode(String(child)));
  }
  return node;
}

function setAttributes(node, attrs) {
  if (!attrs) return node;
  Object.keys(attrs).forEach(function (key) {
    var value = attrs[key];
    if (value === null || value === undefined) return;
    // data-* and aria-* say "true"/"false"; a boolean HTML attribute (hidden, required) is there or not.
    if (typeof value === "boolean" && !/^(data|aria)-/.test(key)) {
      if (value) node.setAttribute(key, "");
      return;
    }
    node.setAttribute(key, String(value));
  });
  return node;
}

/** An HTML element: h("p", { "data-x": 1 }, "text", child, [more]). */
function h(tag, attrs) {
  return appendChildren(setAttributes(document.createElement(tag), attrs), Array.prototype.slice.call(arguments, 2));
}

/** An SVG element, same shape as h(). */
function s(tag, attrs) {
  return appendChildren(setAttributes(document.createElementNS(SVG_NS, tag), attrs), Array.prototype.slice.call(arguments, 2));
}

/** A <dl> of label/value pairs; each value carries data-field for tests. */
function facts(pairs, attrs) {
  return h("dl", Object.assign({ class: "facts" }, attrs || {}), pairs.map(function (pair) {
    return h("div", null, h("dt", null, pair[0]), h("dd", { "data-field": pair[1] }, pair[2]));
  }));
}

function pad2(n) { return (n < 10 ? "0" : "") + n; }

/** hh:mm:ss in the viewer's time zone. */
function clockTime(value) {
  var date = new Date(value);
  if (isNaN(date.getTime())) return "?";
  return pad2(date.getHours()) + ":" + pad2(date.getMinutes()) + ":" + pad2(date.getSeconds());
}

/** hh:mm:ss.mmm: failovers often last less than a second. */
function clockTimeMs(value) {
  var date = new Date(value);
  if (isNaN(date.getTime())) return "?";
  var ms = date.getMilliseconds();
  return clockTime(value) + "." + (ms < 100 ? "0" : "") + pad2(ms);
}

function formatUptime(seconds) {
  var s0 = Math.max(0, Math.floor(seconds));
  var d = Math.floor(s0 / 86400), hh = Math.floor((s0 % 86400) / 3600), mm = Math.floor((s0 % 3600) / 60), ss = s0 % 60;
  if (d > 0) return d + "d " + hh + "h " + pad2(mm) + "m";
  if (hh > 0) return hh + "h " + pad2(mm) + "m " + pad2(ss) + "s";
  if (mm > 0) return mm + "m " + pad2(ss) + "s";
  return ss + "s";
}

function formatMs(ms) {
  if (ms === null || ms === undefined || !isFinite(ms)) return "—";
  if (ms < 1000) return Math.round(ms) + " ms";
  if (ms < 60000) return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + " s";
  return Math.floor(ms / 60000) + " min " + Math.round((ms % 60000) / 1000) + " s";
}

function formatRate(perSecond) {
  if (!isFinite(perSecond)) return "—";
  return perSecond >= 10 ? String(Math.round(perSecond)) : perSecond.toFixed(1);
}

function formatCount(n) {
  return typeof n === "number" ? n.toLocaleString("en-US") : "—";
}
`;
