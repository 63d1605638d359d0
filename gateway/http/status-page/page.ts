/**
 * The live status page served at `GET /`: one self-contained HTML document (its style sheet and script
 * inlined, nothing fetched but `/v1/admin/status`), so it works under the route's strict
 * Content-Security-Policy and on a network without a CDN. The page holds no data of its own; the
 * script asks the status route with the operator's token and draws what it answers.
 */
import { CHARTS_JS } from "./charts.js";
import { DOM_JS } from "./dom.js";
import { RENDER_JS } from "./render.js";
import { SCRIPT_JS } from "./script.js";
import { STATUS_PAGE_CSS } from "./styles.js";

/** The browser script: the parts in dependency order, in one strict-mode function scope. */
export const STATUS_PAGE_SCRIPT = ['(function () {\n"use strict";', DOM_JS, CHARTS_JS, RENDER_JS, SCRIPT_JS, "})();"].join("\n");

// "</script" inside the script would end the element early; the parts are ours, so this is a build check.
if (/<\/script/i.test(STATUS_PAGE_SCRIPT)) throw new Error("status page script contains </script");

export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Poolgate status</title>
<link rel="icon" href="data:,">
<style>${STATUS_PAGE_CSS}</style>
</head>
<body data-state="loading">
<header class="top">
  <h1>Poolgate status</h1>
  <dl class="facts" id="facts" aria-label="Gateway"></dl>
  <div class="conn-box">
    <span class="conn" id="conn" role="status" aria-live="polite" data-conn="loading">Connecting…</span>
    <button type="button" class="link" id="forget" hidden>Forget token</button>
  </div>
</header>
<main>
  <div id="notice" class="notice" hidden></div>
  <form id="token-form" class="token notice warn" data-token-prompt hidden>
    <h2>Operator token needed</h2>
    <p id="token-message" data-message></p>
    <label for="token-input">Operator bearer token</label>
    <div class="row">
      <input id="token-input" type="password" autocomplete="off" spellcheck="false" required aria-describedby="token-message token-help">
      <button type="submit">Show status</button>
    </div>
    <p id="token-help" class="muted">Kept in this browser tab's session storage only and sent as <code>x-poolgate-auth: Bearer &lt;token&gt;</code>.</p>
  </form>
  <div id="dashboard" data-dashboard aria-label="Status"></div>
</main>
<noscript><p>This page needs JavaScript to show the gateway's status.</p></noscript>
<script>
${STATUS_PAGE_SCRIPT}
</script>
</body>
</html>
`;
