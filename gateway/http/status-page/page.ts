/**
 * The live status page served at `GET /`: one self-contained HTML document (its style sheet and script
 * inlined, nothing fetched but `/v1/admin/status`), so it works under the route's strict
 * Content-Security-Policy and on a network without a CDN. The page holds no data of its own; the
 * script (browser/main.ts, bundled by assets.ts) asks the status route with the operator's token and
 * draws what it answers.
 */
import { loadStatusPageAssets, type StatusPageAssets } from "./assets.js";

/** The document around the bundled script and style sheet. */
export function statusPageDocument(assets: StatusPageAssets): string {
  // "</script" or "</style" inside them would end the element early; the code is ours, so this is a build check.
  if (/<\/script/i.test(assets.script)) throw new Error("the status page's script contains </script");
  if (/<\/style/i.test(assets.css)) throw new Error("the status page's style sheet contains </style");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Poolgate status</title>
<link rel="icon" href="data:,">
<style>
${assets.css}</style>
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
${assets.script}
</script>
</body>
</html>
`;
}

let page: Promise<string> | undefined;

/** The page, made on the first request and kept for the life of the process. */
export function statusPageHtml(): Promise<string> {
  page ??= loadStatusPageAssets().then(statusPageDocument);
  return page;
}
