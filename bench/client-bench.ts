/**
 * The client part: what `@poolgate/client` costs the Lambda developer who installs it, beside the two
 * HTTP database drivers they compare it with (`@neondatabase/serverless`, `@planetscale/database`):
 * the installed size of each, the minified ESM bundle of a handler that runs one query, and the cold
 * start, i.e. a fresh Node process importing that bundle and running its first query. Every driver
 * sends that query to one local HTTP server answering each one's protocol with a canned one-row
 * result, so the figures are the client's own cost (import, set-up, one request), not a database's.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { build } from "esbuild";
import { installPackedClient, sizeOf } from "../test/support/packed-client.js";
import type { ClientRow } from "./results.js";

/** The drivers compared, at exact versions. */
const NEON = "@neondatabase/serverless@1.2.0";
const PLANETSCALE = "@planetscale/database@1.20.2";
/** Fresh processes per driver; the median is kept. */
const COLD_STARTS = 15;

/** One handler per driver: import, set up, one query; the stub's address comes in STUB_URL. */
const HANDLERS: { name: string; file: string; source: string }[] = [
  {
    name: "@poolgate/client",
    file: "poolgate.mjs",
    source: `import { createClient } from "@poolgate/client";
const db = createClient({ url: process.env.STUB_URL });
export const handler = async () => (await db.query("select 1 as one")).rows[0];`,
  },
  {
    name: NEON,
    file: "neon.mjs",
    source: `import { neon, neonConfig } from "@neondatabase/serverless";
neonConfig.fetchEndpoint = process.env.STUB_URL + "/sql";
const sql = neon("postgresql://user:password@db.example.com/app");
export const handler = async () => (await sql.query("select 1 as one"))[0];`,
  },
  {
    name: PLANETSCALE,
    file: "planetscale.mjs",
    source: `import { connect } from "@planetscale/database";
const conn = connect({ host: "db.example.com", username: "user", password: "password", fetch: (url, init) => fetch(url.replace("https://db.example.com", process.env.STUB_URL), init) });
export const handler = async () => (await conn.execute("select 1 as one")).rows[0];`,
  },
];

/** The canned one-row answers, by path: the gateway's /v1/query, Neon's /sql, PlanetScale's Execute. */
const ANSWERS: Record<string, unknown> = {
  "/v1/query": { command: "SELECT", columns: [{ name: "one", type: "int4" }], rows: [{ one: 1 }], rowCount: 1, attempts: 1 },
  "/sql": { command: "SELECT", fields: [{ name: "one", dataTypeID: 23 }], rows: [["1"]], rowCount: 1 },
  "/psdb.v1alpha1.Database/Execute": { session: null, result: { fields: [{ name: "one", type: "INT32" }], rows: [{ lengths: ["1"], values: "MQ==" }] }, timing: 0 },
};

function startStub(): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const answer = ANSWERS[request.url ?? ""];
      response.writeHead(answer === undefined ? 404 : 200, { "content-type": "application/json" });
      response.end(JSON.stringify(answer ?? { error: "no such path" }));
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` })));
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/** Runs one labelled piece of work under the progress bar (run.ts's `step`). */
export type Step = <T>(label: string, estimateS: number, work: () => Promise<T>) => Promise<T>;

/** Measures every driver. */
export async function runClientBench(step: Step): Promise<ClientRow[]> {
  const ours = await step("packing and installing @poolgate/client", 30, () => Promise.resolve(installPackedClient()));
  const others = mkdtempSync(join(tmpdir(), "poolgate-bench-drivers-"));
  const { server, url } = await startStub();
  try {
    const installedBytes = new Map<string, number>([["@poolgate/client", sizeOf(join(ours.dir, "node_modules"))]]);
    await step("installing @neondatabase/serverless and @planetscale/database", 20, async () => {
      writeFileSync(join(others, "package.json"), JSON.stringify({ name: "drivers", private: true, type: "module" }));
      for (const spec of [NEON, PLANETSCALE]) {
        const alone = join(others, spec.replace(/[@/]/g, "_"));
        mkdirSync(alone);
        writeFileSync(join(alone, "package.json"), JSON.stringify({ name: "alone", private: true }));
        await promisify(execFile)("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--silent", spec], { cwd: alone });
        installedBytes.set(spec, sizeOf(join(alone, "node_modules")));
      }
      await promisify(execFile)("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--silent", NEON, PLANETSCALE], { cwd: others });
    });

    const rows: ClientRow[] = [];
    for (const handler of HANDLERS) await step(`${handler.name}: bundle and ${COLD_STARTS} cold starts`, COLD_STARTS * 0.3 + 1, async () => {
      const dir = handler.name === "@poolgate/client" ? ours.dir : others;
      const entry = join(dir, handler.file);
      writeFileSync(entry, handler.source);
      const bundle = join(dir, `bundle-${handler.file}`);
      await build({ entryPoints: [entry], bundle: true, minify: true, format: "esm", platform: "node", target: "node20", outfile: bundle, logLevel: "silent" });
      const runner = join(dir, `cold-${handler.file}`);
      writeFileSync(
        runner,
        `const started = performance.now();\nconst { handler } = await import("./bundle-${handler.file}");\nconst row = await handler();\nconsole.log(JSON.stringify({ ms: performance.now() - started, row }));\n`,
      );
      const inProcess: number[] = [];
      const wholeProcess: number[] = [];
      for (let run = 0; run < COLD_STARTS; run++) {
        const spawned = performance.now();
        const { stdout } = await promisify(execFile)(process.execPath, [runner], { cwd: dir, env: { ...process.env, STUB_URL: url } });
        wholeProcess.push(performance.now() - spawned);
        const out = JSON.parse(stdout) as { ms: number; row: { one: unknown } };
        if (Number(out.row.one) !== 1) throw new Error(`${handler.name}: the first query answered ${JSON.stringify(out.row)}`);
        inProcess.push(out.ms);
      }
      rows.push({
        driver: handler.name,
        installedKiB: Math.round((installedBytes.get(handler.name) ?? Number.NaN) / 1024),
        bundleKiB: Math.round((statSync(bundle).size / 1024) * 10) / 10,
        importAndFirstQueryMs: Math.round(median(inProcess) * 10) / 10,
        processMs: Math.round(median(wholeProcess)),
      });
    });
    return rows;
  } finally {
    server.close();
    ours.remove();
    rmSync(others, { recursive: true, force: true });
  }
}
