/**
 * The status page's script: polls `GET /v1/admin/status` once a second and redraws; asks for an
 * operator token on 401/403 (kept in sessionStorage, sent as `x-poolgate-auth: Bearer …`); says so
 * when the gateway cannot be reached, keeping the last view and retrying.
 * `document.body.dataset.state` is `loading`, `live`, `auth`, `unreachable` or `error`.
 */
import { clockTime, facts } from "./dom.js";
import { renderDashboard, renderFacts } from "./render.js";
import type { StatusResponse } from "./status-types.js";

const STATUS_URL = "v1/admin/status";
const TOKEN_KEY = "poolgate.operatorToken";
const POLL_MS = 1000;
// Longer than a poll, shorter than an operator's patience: a hung gateway reads as unreachable.
const TIMEOUT_MS = 4000;

/** The element with this id, which the page's HTML (page.ts) always has. */
function byId<T extends HTMLElement>(id: string, type: new () => T): T {
  const element = document.getElementById(id);
  if (!(element instanceof type)) throw new Error(`the status page has no #${id}`);
  return element;
}

const ui = {
  facts: byId("facts", HTMLElement),
  conn: byId("conn", HTMLElement),
  notice: byId("notice", HTMLElement),
  form: byId("token-form", HTMLFormElement),
  input: byId("token-input", HTMLInputElement),
  message: byId("token-message", HTMLElement),
  forget: byId("forget", HTMLButtonElement),
  dashboard: byId("dashboard", HTMLElement),
};
let timer: ReturnType<typeof setTimeout> | undefined;
let lastUpdate: number | null = null;
let polls = 0;
// Only the newest request's answer counts: a late 401 from before a token was entered must not undo it.
let latest = 0;
// Where the token lives when sessionStorage is disabled: until the page is closed.
let memoryToken: string | null = null;

function storedToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

function storeToken(token: string | null): void {
  try {
    if (token === null) sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    memoryToken = token;
  }
}

function currentToken(): string | null {
  return storedToken() || memoryToken;
}

type PageState = "loading" | "live" | "auth" | "unreachable" | "error";

function setState(state: PageState, connText: string): void {
  document.body.setAttribute("data-state", state);
  document.body.classList.toggle("stale", state === "unreachable" || state === "error");
  ui.conn.setAttribute("data-conn", state);
  ui.conn.textContent = connText;
  ui.forget.hidden = !currentToken();
}

function showNotice(kind: string, text: string | null): void {
  if (text === null) {
    ui.notice.hidden = true;
    ui.notice.textContent = "";
    return;
  }
  ui.notice.hidden = false;
  ui.notice.className = `notice ${kind}`;
  ui.notice.setAttribute("data-notice", kind);
  ui.notice.setAttribute("role", "alert");
  ui.notice.textContent = text;
}

function since(): string {
  return lastUpdate ? ` Last update ${clockTime(lastUpdate)}.` : " No data yet.";
}

function schedule(): void {
  clearTimeout(timer);
  timer = setTimeout(poll, POLL_MS);
}

/** Reads the error code of a refusal ({"error": {"code"}}), if the body says one. */
async function refusalCode(response: Response): Promise<string | null> {
  try {
    const body: unknown = await response.json();
    if (typeof body !== "object" || body === null || !("error" in body)) return null;
    const error: unknown = body.error;
    return typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : null;
  } catch {
    return null;
  }
}

function askForToken(status: number, code: string | null): void {
  const token = currentToken();
  const text =
    status === 403
      ? `This token is not an operator's: the gateway answered 403${code ? ` (${code})` : ""}. Paste the bearer token of an admin principal.`
      : token
        ? `The gateway refused this token (401${code ? ` ${code}` : ""}). Paste a valid operator bearer token.`
        : `This gateway requires authentication (401${code ? ` ${code}` : ""}). Paste an operator bearer token to see its status.`;
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

function unreachable(): void {
  showNotice("bad", `The gateway is unreachable; retrying every second.${since()}`);
  setState("unreachable", "Gateway unreachable — retrying");
  schedule();
}

function failed(err: unknown): void {
  const message = err instanceof Error && err.message ? err.message : String(err);
  showNotice("bad", `Could not show the status: ${message}; retrying.${since()}`);
  setState("error", "Status unreadable — retrying");
  schedule();
}

async function answered(response: Response): Promise<void> {
  if (response.status === 401 || response.status === 403) {
    askForToken(response.status, await refusalCode(response));
    return;
  }
  if (!response.ok) {
    const code = await refusalCode(response);
    showNotice("bad", `The gateway answered ${response.status}${code ? ` (${code})` : ""} to the status request; retrying.${since()}`);
    setState("error", `Status request failed (${response.status})`);
    schedule();
    return;
  }
  // The gateway's own answer (schemas/status.ts); a body of another shape fails in draw() and reads as an error.
  draw((await response.json()) as StatusResponse);
  schedule();
}

function poll(): void {
  clearTimeout(timer);
  const headers: Record<string, string> = { accept: "application/json" };
  const token = currentToken();
  if (token) headers["x-poolgate-auth"] = `Bearer ${token}`;
  const mine = ++latest;
  const controller = new AbortController();
  const abort = setTimeout(() => controller.abort(), TIMEOUT_MS);
  void fetch(STATUS_URL, { headers, cache: "no-store", credentials: "omit", signal: controller.signal }).then(
    (response) => {
      clearTimeout(abort);
      if (mine === latest) return answered(response).catch(failed);
    },
    () => {
      // fetch rejects only when no answer came: refused, reset, or timed out.
      clearTimeout(abort);
      if (mine === latest) unreachable();
    },
  );
}

function draw(status: StatusResponse): void {
  ui.facts.replaceChildren(...Array.from(facts(renderFacts(status)).childNodes));
  ui.dashboard.replaceChildren(...renderDashboard(status));
  polls += 1;
  ui.dashboard.setAttribute("data-generated-at", status.generatedAt);
  ui.dashboard.setAttribute("data-polls", String(polls));
  lastUpdate = Date.now();
  ui.form.hidden = true;
  showNotice("", null);
  setState("live", `Live · updated ${clockTime(lastUpdate)}`);
}

ui.form.addEventListener("submit", (event) => {
  event.preventDefault();
  const token = ui.input.value.trim().replace(/^bearer\s+/i, "");
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

ui.forget.addEventListener("click", () => {
  storeToken(null);
  memoryToken = null;
  setState("loading", "Token forgotten");
  poll();
});

setState("loading", "Connecting…");
poll();
