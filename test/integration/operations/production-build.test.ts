/**
 * Builds and starts the gateway the way the Dockerfile does — there is no Docker engine here:
 *   1. compile with the gateway's build config (`npm run build:gateway`'s tsconfig) into a temporary dir,
 *      and bundle the status page's browser code beside it;
 *   2. install production dependencies only (`npm ci --omit=dev --ignore-scripts`) next to it, with the
 *      patched dependencies (patches/) copied over them as the build stage left them;
 *   3. start `node dist/gateway/main.js` as a separate process, as the image's CMD does, and check
 *      that it serves /healthz and a query against the real local PostgreSQL, then drains on SIGTERM.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeStatusPageBundle } from "../../../gateway/http/status-page/assets.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";
import { spawnWatched } from "../../support/process-output.js";
import { waitFor } from "../../support/wait-for.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
let db: TestDatabase;
let dir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  dir = mkdtempSync(join(tmpdir(), "poolgate-image-"));
  execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.gateway.json"), "--outDir", join(dir, "dist")], {
    stdio: "pipe",
  });
  cpSync(join(root, "gateway/engines/embedded/pglite-server.mjs"), join(dir, "dist/gateway/engines/embedded/pglite-server.mjs"));
  // build:gateway's last step: the status page's browser code bundled by esbuild beside the compiled module
  // (build-bundle.js, run here in this process: the directory has no esbuild of its own to import).
  await writeStatusPageBundle(pathToFileURL(join(root, "gateway/http/status-page/browser/")), pathToFileURL(join(dir, "dist/gateway/http/status-page/bundle/")));
  cpSync(join(root, "package.json"), join(dir, "package.json"));
  cpSync(join(root, "package-lock.json"), join(dir, "package-lock.json"));
  execFileSync("npm", ["ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: dir, stdio: "pipe" });
  // The Dockerfile copies the patched dependencies (patches/) from its build stage.
  cpSync(join(root, "node_modules/mysql2"), join(dir, "node_modules/mysql2"), { recursive: true });
  // A hang guard, not a timing assertion: tsc and npm ci take minutes on a loaded machine.
}, 900_000);

afterAll(async () => {
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the production build", () => {
  it("starts from compiled JavaScript with production dependencies only, serves, and drains on SIGTERM", async () => {
    // Nothing but production dependencies: the test toolchain is not there.
    expect(() => execFileSync(process.execPath, ["-e", "require.resolve('vitest')"], { cwd: dir, stdio: "pipe" })).toThrow();
    expect(() => execFileSync(process.execPath, ["-e", "require.resolve('esbuild')"], { cwd: dir, stdio: "pipe" })).toThrow();
    const { child, output: logged, exited } = spawnWatched(process.execPath, ["dist/gateway/main.js"], {
      cwd: dir,
      env: { PATH: process.env.PATH, NODE_ENV: "production", PORT: "0", HOST: "127.0.0.1", POOLGATE_WRITER_URL: db.url },
    });
    try {
      await waitFor(() => /listening on (http:\/\/[^"\s]+)/.test(logged()), 30000, "listening log line");
      const address = /listening on (http:\/\/[^"\s]+)/.exec(logged())?.[1];
      const health = (await (await fetch(`${address}/healthz`)).json()) as { status: string; clusters: { default: { engine: string; database: { status: string } } } };
      expect(health).toMatchObject({ status: "ok", clusters: { default: { engine: "postgres", database: { status: "up" } } } });
      // Listening comes first; ready once the pools have warmed (gateway/main.ts).
      await waitFor(async () => (await fetch(`${address}/readyz`)).status === 200, 30000, "/readyz 200");
      const query = await fetch(`${address}/v1/query`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ sql: "select 1 as one" }) });
      expect(await query.json()).toMatchObject({ rows: [{ one: 1 }] });
      // The status page from the bundle beside the compiled code, without esbuild.
      const page = await fetch(`${address}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/<script>\s*"use strict";\s*\(\(\) => \{[\s\S]*v1\/admin\/status[\s\S]*<\/script>/);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  }, 60000);

  it("stops with its embedded database when a supervisor sends SIGTERM to the shell npm start runs", async () => {
    // npm runs a script through `sh -c` and signals only that shell: the script must hand its pid to the gateway.
    const start = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: { start: string } }).scripts.start;
    const run = start.slice(start.indexOf("&&") + 2).trim();
    const { child, output: logged, exited } = spawnWatched("sh", ["-c", run], {
      cwd: dir,
      env: { PATH: process.env.PATH, PORT: "0", HOST: "127.0.0.1", POOLGATE_DATA_DIR: join(dir, "embedded-data") },
    });
    const processesUsing = () => execFileSync("ps", ["-eo", "args"], { encoding: "utf8" }).split("\n").filter((line) => line.includes(dir));
    try {
      await waitFor(() => /poolgate ready/.test(logged()), 90000, "ready log line");
      expect(processesUsing().some((line) => line.includes("pglite-server"))).toBe(true);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    await waitFor(() => processesUsing().length === 0, 15000, "no gateway or embedded database process left");
  }, 120000);
});
