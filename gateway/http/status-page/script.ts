/**
 * Browser JavaScript (a string inlined into the status page): polls `GET /v1/admin/status` once a
 * second and redraws; asks for an operator token on 401/403 (kept in sessionStorage, sent as
 * `x-poolgate-auth: Bearer …`); says so when the gateway cannot be reached, keeping the last view and
 * retrying. `document.body.dataset.state` is `loading`, `live`, `auth`, `unreachable` or `error`.
 */
export const SCRIPT_JS = String.raw`
var STATUS_URL = "v1/admin/status";
var TOKEN_KEY = "poolgate.operatorToken";
var POLL_MS = 1000;
// Longer than a poll, shorter than an operator's patience: a hung gateway reads as unreachable.
var TIMEOUT_MS = 4000;

var ui = {
  facts: document.getElementById("facts"),
  conn: document.getElementById("conn"),
  notice: document.getElementById("notice"),
  form: document.getElementById("token-form"),
  input: document.getElementById("token-input"),
  message: document.getElementById("token-message"),
  forget: document.getElementById("forget"),
  dashboard: document.getElementById("dashboard"),
};
var timer = null;
var lastUpdate = null;
var polls = 0;
// Only the newest request's answer counts: a late 401 from before a token was entered must not undo it.
var latest = 0;
// Where the token lives when sessionStorage is disabled: until the page is closed.
var memoryToken = null;

function storedToken() {
  try { return sessionStorage.getItem(TOKEN_KEY); } catch (e) { return null; }
}

function storeToken(token) {
  try {
    if (token === null) sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  } catch (e) { memoryToken = token; }
}
function currentToken() { return storedToken() || memoryToken; }

function setState(state, connText) {
  document.body.setAttribute("data-state", state);
  document.body.classList.toggle("stale", state === "unreachable" || state === "error");
  ui.conn.setAttribute("data-conn", state);
  ui.conn.textContent = connText;
  ui.forget.hidden = !currentToken();
}

function showNotice(kind, text) {
  if (text === null) { ui.notice.hidden = true; ui.notice.textContent = ""; return; }
  ui.notice.hidden = false;
  ui.notice.className = "notice " + kind;
  ui.notice.setAttribute("data-notice", kind);
  ui.notice.setAttribute("role", "alert");
  ui.notice.textContent = text;
}

function since() { return lastUpdate ? " Last update " + clockTime(lastUpdate) + "." : " No data yet."; }

function schedule() {
  clearTimeout(timer);
  timer = setTimeout(poll, POLL_MS);
}

/** Reads the error code of a refusal ({"error": {"code"}}), if the body says one. */
function refusalCode(response) {
  return response.json().then(function (body) {
    return body && body.error && typeof body.error.code === "string" ? body.error.code : null;
  }, function () { return null; });
}

function askForToken(status, code) {
  var token = currentToken();
  var text = status === 403
    ? "This token is not an operator's: the gateway answered 403" + (code ? " (" + code + ")" : "") + ". Paste the bearer token of an admin principal."
    : token
      ? "The gateway refused this token (401" + (code ? " " + code : "") + "). Paste a valid operator bearer token."
      : "This gateway requires authentication (401" + (code ? " " + code : "") + "). Paste an operator bearer token to see its status.";
  ui.message.textContent = text;
  ui.form.hidden = false;
  // What an earlier token showed is not for whoever holds the page now.
  ui.dashboard.replaceChildren();
  ui.facts.replaceChildren();
  showNotice("", null);
  setState("auth", "Waiting for an operator token");
  // Polling stops here until a token is entered: a refused request every second would only add to
  // the gateway's 4xx count.
  clearTimeout(timer);
  if (document.activeElement !== ui.input) ui.input.focus();
}

function unreachable() {
  showNotice("bad", "The gateway is unreachable; retrying every second." + since());
  setState("unreachable", "Gateway unreachable — retrying");
  schedule();
}

function failed(err) {
  showNotice("bad", "Could not show the status: " + (err && err.message ? err.message : String(err)) + "; retrying." + since());
  setState("error", "Status unreadable — retrying");
  schedule();
}

function answered(response) {
  if (response.status === 401 || response.status === 403) {
    return refusalCode(response).then(function (code) { askForToken(response.status, code); });
  }
  if (!response.ok) {
    return refusalCode(response).then(function (code) {
      showNotice("bad", "The gateway answered " + response.status + (code ? " (" + code + ")" : "") + " to the status request; retrying." + since());
      setState("error", "Status request failed (" + response.status + ")");
      schedule();
    });
  }
  return response.json().then(function (status) {
    draw(status);
    schedule();
  });
}

function poll() {
  clearTimeout(timer);
  var headers = { accept: "application/json" };
  var token = currentToken();
  if (token) headers["x-poolgate-auth"] = "Bearer " + token;
  var mine = ++latest;
  var controller = new AbortController();
  var abort = setTimeout(function () { controller.abort(); }, TIMEOUT_MS);
  fetch(STATUS_URL, { headers: headers, cache: "no-store", credentials: "omit", signal: controller.signal })
    .then(function (response) {
      clearTimeout(abort);
      if (mine === latest) return answered(response).catch(failed);
    }, function () {
      // fetch rejects only when no answer came: refused, reset, or timed out.
      clearTimeout(abort);
      if (mine === latest) unreachable();
    });
}

function draw(status) {
  ui.facts.replaceChildren.apply(ui.facts, Array.prototype.slice.call(facts(renderFacts(status)).childNodes));
  ui.dashboard.replaceChildren.apply(ui.dashboard, renderDashboard(status));
  polls += 1;
  ui.dashboard.setAttribute("data-generated-at", status.generatedAt);
  ui.dashboard.setAttribute("data-polls", polls);
  lastUpdate = Date.now();
  ui.form.hidden = true;
  showNotice("", null);
  setState("live", "Live · updated " + clockTime(lastUpdate));
}

ui.form.addEventListener("submit", function (event) {
  event.preventDefault();
  var token = ui.input.value.trim().replace(/^bearer\s+/i, "");
  // A header value must be visible ASCII; anything else would make fetch throw.
  if (!/^[\x21-\x7e]+$/.test(token)) {
    ui.message.textContent = "A bearer token is one word of visible ASCII characters; please paste it again.";
    return;
  }
  storeToken(token);
  ui.input.value = "";
  ui.form.hidden = true;
  setState("loading", "Checking the token…");
  poll();
});

ui.forget.addEventListener("click", function () {
  storeToken(null);
  memoryToken = null;
  setState("loading", "Token forgotten");
  poll();
});

setState("loading", "Connecting…");
poll();
`;
