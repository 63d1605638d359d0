/**
 * The live status page (GET /) in headless Chromium against a real PostgreSQL primary and streaming
 * replica behind a gateway with bearer auth: the token prompt, the topology, pools and charts drawn
 * from /v1/admin/status, a failover followed without a reload, an unreachable gateway, and no console
 * error or CSP violation on the way. A screenshot is kept in test-results/ and at
 * /tmp/poolgate-status-page.png for a person to look at.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type ConsoleMessage, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { type PgInstance, type PgTopology, startTopology } from "../../support/pg-topology.js";

const CHROMIUM = "/usr/bin/chromium";
// Without the background-networking flags Chromium keeps calling home, which floods a closed network.
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const TOKENS = { operator: "operator-token-0123456789abcdef01", app: "app-token-0123456789abcdef0123456" };
const SCREENSHOT_DIR = join(import.meta.dirname, "../../../test-results");
const SCREENSHOT_COPY = "/tmp/poolgate-status-page.png";

/** What a page said on its console and as uncaught errors, and the CSP violations it reported. */
interface PageWatch {
  page: Page;
  errors: string[];
}

let topology: PgTopology;
let primary: PgInstance;
let replica: PgInstance;
let gw: TestGateway;
let context: BrowserContext | undefined;
let profileDir: string;
let tokens: TokensFile | undefined;
let stopTraffic = false;
let traffic: Promise<void> = Promise.resolve();

async function openPage(): Promise<PageWatch> {
  if (!context) throw new Error("no browser");
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (message: ConsoleMessage) => {
    if (message.type() === "error" || /Content.Security.Policy/i.test(message.text())) errors.push(`${message.text()} @ ${message.location().url}`);
  });
  page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
  await page.goto(`${gw.baseUrl}/`);
  return { page, errors };
}

/** Console errors other than the given expected ones (a refused or failed status request). */
const unexpected = (watch: PageWatch, allowed: RegExp[] = []) => watch.errors.filter((error) => !allowed.some((pattern) => pattern.test(error)));
const REFUSED_STATUS = /status of 40[13] .*@ http:\/\/[^ ]+\/v1\/admin\/status$/;
const cspViolations = (page: Page) => page.evaluate<string[]>("window.cspViolations");
// In every page before its own script; a string, because the test's TypeScript has no DOM types.
const WATCH_CSP = 'window.cspViolations = []; document.addEventListener("securitypolicyviolation", (e) => window.cspViolations.push(e.violatedDirective + " " + e.blockedURI));';

/** Reads, writes and a few bad statements from several callers at once, until told to stop. */
function startTraffic(): Promise<void> {
  const caller = { "x-poolgate-auth": `Bearer ${TOKENS.app}` };
  const worker = async (n: number) => {
    for (let i = 0; !stopTraffic; i++) {
      const sql =
        i % 7 === 3
          ? "select * from no_such_table"
          : n % 2 === 0
            ? "select pg_sleep(0.03), count(*) from hits"
            : "insert into hits (note) values ('status page') returning id";
      await gw.post("/v1/query", { sql, timeoutMs: 3000 }, caller).catch(() => undefined);
    }
  };
  return Promise.all([0, 1, 2, 3, 4, 5].map(worker)).then(() => undefined);
}

/** How many points an SVG path's d attribute draws through (its M and L commands). */
const pathPoints = (d: string | null) => (d ?? "").match(/[ML]-?\d/g)?.length ?? 0;

/** Width, height and size of a PNG, from its signature and IHDR chunk. */
function pngInfo(path: string): { width: number; height: number; bytes: number } {
  const data = readFileSync(path);
  expect(data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
  expect(data.subarray(12, 16).toString("latin1")).toBe("IHDR");
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20), bytes: data.length };
}

describe("the live status page", () => {
  beforeAll(async () => {
    // Like a missing database, a missing browser fails the run: it is never skipped.
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}: run \`apt-get install -y chromium\` (.ci/run does this)`);
    topology = await startTopology(1);
    [primary, replica] = topology.all() as [PgInstance, PgInstance];
    await primary.query("create table hits (id serial primary key, note text)");
    tokens = writeTokensFile({ operator: TOKENS.operator, app: TOKENS.app });
    gw = await startTestGateway({
      clusters: { default: { writerUrl: primary.url(), readerUrls: [replica.url()] } },
      pool: { maxSize: 4, minIdle: 1, acquireTimeoutMs: 3000 },
      topology: { checkIntervalMs: 100, checkTimeoutMs: 500, failoverWaitMs: 5000 },
      auth: {
        bearer: { tokensFile: tokens.path },
        principals: { operator: { admin: true }, app: { clusters: { default: "read-write" } } },
      },
      insights: { enabled: true },
    });
    traffic = startTraffic();
    profileDir = mkdtempSync(join(tmpdir(), "poolgate-chromium-"));
    // A persistent context because the profile directory is ours (Playwright refuses --user-data-dir in args).
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 900 },
    });
    await context.addInitScript({ content: WATCH_CSP });
  }, 60000);

  afterAll(async () => {
    stopTraffic = true;
    await traffic;
    await context?.close();
    await gw?.stop();
    await topology?.destroy();
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    tokens?.remove();
  });

  it("asks for an operator token when the status route answers 401, and explains a 403", async () => {
    const watch = await openPage();
    const { page } = watch;
    await page.locator("body[data-state='auth']").waitFor({ timeout: 5000 });
    expect(await page.locator("[data-token-prompt]").isVisible()).toBe(true);
    expect(await page.locator("[data-message]").textContent()).toContain("requires authentication (401");
    expect(await page.getByLabel("Operator bearer token").isVisible()).toBe(true);
    expect(await page.locator("[data-endpoint]").count()).toBe(0);
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOT_DIR, "status-page-token-prompt.png") });

    await page.getByLabel("Operator bearer token").fill(TOKENS.app);
    await page.getByRole("button", { name: "Show status" }).click();
    await page.locator("[data-message]", { hasText: "not an operator's" }).waitFor({ timeout: 5000 });
    expect(await page.locator("body").getAttribute("data-state")).toBe("auth");

    expect(unexpected(watch, [REFUSED_STATUS])).toEqual([]);
    expect(await cspViolations(page)).toEqual([]);
    await page.close();
  });

  it("shows the topology, pools and charts once the token is entered, and follows a failover without a reload", async () => {
    const watch = await openPage();
    const { page } = watch;
    let navigations = 0;
    page.on("framenavigated", (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    await page.locator("body[data-state='auth']").waitFor({ timeout: 5000 });
    await page.getByLabel("Operator bearer token").fill(`Bearer ${TOKENS.operator}`);
    await page.getByLabel("Operator bearer token").press("Enter");
    await page.locator("body[data-state='live']").waitFor({ timeout: 5000 });
    expect(await page.evaluate<string | null>('sessionStorage.getItem("poolgate.operatorToken")')).toBe(TOKENS.operator);

    const cluster = page.locator("[data-cluster='default']");
    const writer = cluster.locator("article[data-endpoint='default/writer']");
    const reader = cluster.locator("article[data-endpoint='default/reader1']");
    expect(await writer.getAttribute("data-role")).toBe("primary");
    expect(await reader.getAttribute("data-role")).toBe("replica");
    expect(await cluster.getAttribute("data-primary")).toBe("default/writer");
    expect(await page.locator("[data-field='version']").textContent()).toBe("0.1.0");
    expect(await page.locator("[data-field='status']").textContent()).toBe("ok");
    for (const name of ["default/writer", "default/reader1"]) {
      const pool = cluster.locator(`[data-pool='${name}']`);
      expect(await pool.getAttribute("data-max-size")).toBe("4");
      // The charts fill as the gateway takes its once-a-second samples.
      await expect.poll(async () => Number(await pool.locator("[data-chart='pool']").getAttribute("data-points")), { timeout: 8000 }).toBeGreaterThanOrEqual(3);
      // A stacked band goes along its top and back along its bottom: two points a sample.
      expect(pathPoints(await pool.locator("path[data-series='active']").getAttribute("d"))).toBeGreaterThanOrEqual(6);
    }
    await expect.poll(async () => Number(await page.locator("[data-chart='rates']").getAttribute("data-points")), { timeout: 8000 }).toBeGreaterThanOrEqual(3);
    expect(pathPoints(await page.locator("svg[data-chart='rates'] path[data-series='requests']").getAttribute("d"))).toBeGreaterThanOrEqual(3);
    expect(pathPoints(await page.locator("svg[data-chart='errors'] path[data-series='clientErrors']").getAttribute("d"))).toBeGreaterThanOrEqual(3);
    expect(Number(await page.locator("[data-field='rate-requests']").textContent())).toBeGreaterThan(0);
    // Every seventh statement of the traffic is refused: the 4xx rate shows it.
    expect(Number(await page.locator("[data-field='rate-client-errors']").textContent())).toBeGreaterThan(0);
    expect(await cluster.locator("[data-failover]").count()).toBe(0);
    // Query insights' table: the traffic's statements by principal, literals removed.
    const insightRows = page.locator("[data-section='insights'] tr[data-insight]");
    await insightRows.first().waitFor({ timeout: 5000 });
    expect(await insightRows.first().getAttribute("data-principal")).toBe("app");
    const samples = await page.locator("[data-section='insights'] td code").allTextContents();
    expect(samples).toContain("insert into hits (note) values ($1) returning id");
    expect(samples.join("\n")).not.toContain("status page");
    await page.evaluate("window.sameDocument = true");

    await primary.stop("immediate");
    await cluster.locator("[data-banner='no-primary']").waitFor({ timeout: 5000 });
    expect(await cluster.getAttribute("data-has-primary")).toBe("false");
    await page.screenshot({ path: join(SCREENSHOT_DIR, "status-page-during-failover.png"), fullPage: true });
    await replica.promote();
    await page.locator("[data-cluster='default'][data-primary='default/reader1']").waitFor({ timeout: 8000 });
    expect(await reader.getAttribute("data-role")).toBe("primary");
    expect(await writer.getAttribute("data-healthy")).toBe("false");
    expect(await cluster.locator("[data-banner='no-primary']").count()).toBe(0);
    // The failover to the promoted replica. A failover sign that reached the monitor while the old
    // primary was still shutting down may be listed too, resolved back to the writer in milliseconds
    // (the monitor's check still reached it): a true record of a different event.
    const failover = cluster.locator("[data-failover][data-resolved='true']", { hasText: "default/writer → default/reader1" });
    await failover.waitFor({ timeout: 5000 });
    expect(Number(await failover.getAttribute("data-duration-ms"))).toBeGreaterThan(0);
    expect(await failover.textContent()).toContain("default/writer → default/reader1");
    expect(await failover.locator("[data-field='duration']").textContent()).toMatch(/\d+(\.\d+)? m?s$/);
    expect(await failover.locator("[data-event]").count()).toBeGreaterThanOrEqual(2);
    expect(await page.evaluate<boolean>("window.sameDocument === true")).toBe(true);
    expect(navigations).toBe(0);

    // Let a few samples after the failover reach the charts, then keep a picture for people.
    await expect.poll(() => page.locator("[data-failover-mark]").count(), { timeout: 5000 }).toBeGreaterThan(0);
    const screenshot = join(SCREENSHOT_DIR, "status-page.png");
    await page.screenshot({ path: screenshot, fullPage: true });
    copyFileSync(screenshot, SCREENSHOT_COPY);
    const png = pngInfo(screenshot);
    expect(png.width).toBe(1280);
    expect(png.height).toBeGreaterThanOrEqual(900);
    expect(png.bytes).toBeGreaterThan(30000);

    expect(unexpected(watch, [REFUSED_STATUS])).toEqual([]);
    expect(await cspViolations(page)).toEqual([]);
    await page.close();
  });

  it("says when the gateway is unreachable, keeps the last view, and recovers on its own", async () => {
    const watch = await openPage();
    const { page } = watch;
    await page.evaluate(`sessionStorage.setItem("poolgate.operatorToken", ${JSON.stringify(TOKENS.operator)})`);
    await page.reload();
    await page.locator("body[data-state='live']").waitFor({ timeout: 5000 });

    await page.route("**/v1/admin/status", (route) => route.abort("connectionrefused"));
    await page.locator("body[data-state='unreachable']").waitFor({ timeout: 5000 });
    expect(await page.locator("[data-notice='bad']").textContent()).toContain("unreachable; retrying every second");
    expect(await page.locator("article[data-endpoint='default/reader1']").count()).toBe(1);
    await page.unroute("**/v1/admin/status");
    await page.locator("body[data-state='live']").waitFor({ timeout: 5000 });
    expect(await page.locator("#notice").isHidden()).toBe(true);

    expect(unexpected(watch, [REFUSED_STATUS, /ERR_CONNECTION_REFUSED/])).toEqual([]);
    expect(await cspViolations(page)).toEqual([]);
    await page.close();
  });

  // A stand-in answer: no real server names an endpoint with markup, and this one also shows states
  // the scenario above does not reach (a ban, draining, a failover still running).
  it("shows server strings as text, a banned replica, a draining gateway and a failover in progress", async () => {
    const watch = await openPage();
    const { page } = watch;
    await page.route("**/v1/admin/status", (route) => route.fulfill({ json: hostileStatus() }));
    await page.evaluate(`sessionStorage.setItem("poolgate.operatorToken", "anything")`);
    await page.reload();
    await page.locator("body[data-state='live']").waitFor({ timeout: 5000 });

    expect(await page.locator("[data-field='version']").textContent()).toBe("<b>9</b>");
    expect(await page.locator("[data-field='status']").textContent()).toBe("draining");
    expect(await page.locator("[data-field='uptime']").textContent()).toBe("1h 02m 05s");
    const cluster = page.locator("section[data-cluster]");
    expect(await cluster.getAttribute("data-cluster")).toBe(HOSTILE.cluster);
    expect(await cluster.locator("h2").textContent()).toBe(`Cluster ${HOSTILE.cluster}`);
    await cluster.locator("[data-banner='no-primary']").waitFor({ timeout: 1000 });
    const banned = cluster.locator("article[data-banned='true']");
    expect(await banned.getAttribute("data-endpoint")).toBe(HOSTILE.endpoint);
    expect(await banned.getAttribute("data-role")).toBe("replica");
    expect(await banned.locator("[data-field='ban']").textContent()).toBe(`Banned from reads: ${HOSTILE.ban}`);
    expect(await banned.locator("[data-field='lag']").textContent()).toBe("1.23 s");
    expect(await cluster.locator("article[data-role='unknown'][data-healthy='false']").count()).toBe(1);
    const failover = cluster.locator("[data-failover][data-resolved='false']");
    expect(await failover.textContent()).toContain(`Reason: ${HOSTILE.reason}`);
    expect(await failover.locator("[data-event]").textContent()).toContain(HOSTILE.reason);
    // Nothing the server said became markup, so nothing ran.
    expect(await page.locator("img, b, main i:not(.legend i), main script, main svg:not(.chart, .failover-bar)").count()).toBe(0);
    expect(await page.evaluate<boolean>("[...document.querySelectorAll('*')].some((e) => [...e.attributes].some((a) => a.name.startsWith('on')))")).toBe(false);
    expect(await page.evaluate<boolean>("window.pwned === undefined")).toBe(true);

    expect(unexpected(watch, [REFUSED_STATUS])).toEqual([]);
    expect(await cspViolations(page)).toEqual([]);
    await page.close();
  });
});

const HOSTILE = {
  cluster: "c<script>window.pwned=1</script>",
  endpoint: `<img src=x onerror="window.pwned=1">`,
  ban: "replication lag 1234ms > 400ms <i>x</i>",
  reason: `<svg onload="window.pwned=1"></svg>`,
};

/** A status answer whose every string is markup, in states a healthy test topology does not reach. */
function hostileStatus(): unknown {
  const now = Date.now();
  const pool = { total: 2, active: 1, idle: 1, waiting: 0, maxSize: 4 };
  const sample = (ago: number, requests: number) => ({
    at: now - ago,
    requests,
    clientErrors: 1,
    serverErrors: 0,
    pools: { [HOSTILE.endpoint]: { active: 1, idle: 1, waiting: ago / 1000 }, other: { active: 0, idle: 0, waiting: 0 } },
  });
  const startedAt = new Date(now - 2000).toISOString();
  return {
    generatedAt: new Date(now).toISOString(),
    version: "<b>9</b>",
    status: "draining",
    uptimeS: 3725,
    totals: { requests: 30, clientErrors: 1, serverErrors: 0, retries: 0, failovers: 0, cacheReads: 4, cacheHits: 3 },
    clusters: {
      [HOSTILE.cluster]: {
        engine: "mysql",
        primary: null,
        openTransactions: 1,
        endpoints: [
          { name: HOSTILE.endpoint, role: "replica", healthy: true, lagMs: 1234, banned: HOSTILE.ban, outstanding: 0, pool },
          { name: "other", role: "unknown", healthy: false, lagMs: null, banned: null, outstanding: 0, pool: { ...pool, total: 0, active: 0, idle: 0 } },
        ],
        failovers: [{ startedAt, reason: HOSTILE.reason, oldPrimary: "other", timeline: [{ at: startedAt, event: HOSTILE.reason }] }],
      },
    },
    history: [sample(3000, 0), sample(2000, 10), sample(1000, 20), sample(0, 30)],
  };
}
