/**
 * The client as someone outside this repository gets it: `npm pack` the package in client/ (its build
 * runs on pack), install the tarball into a new project in a temporary directory (dependencies from the
 * npm cache the repository's own install filled, the registry only if something is missing), type-check
 * a consumer with `tsc` under moduleResolution node16, nodenext, bundler and classic node, and run a
 * query, a batch and a transaction against a gateway on the real local PostgreSQL.
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const tsc = join(root, "node_modules/typescript/bin/tsc");
let project: string;
let tarball: string;
let db: TestDatabase;
let gw: TestGateway;

/** A consumer using the public surface; it must type-check under every module resolution. */
const CONSUMER = `
import { createClient, DatabaseError, poolgateRequestHandler, asAwsSdkV2, iamAuth, type QueryResult, type Param } from "@poolgate/client";

declare const url: string;
const db = createClient({ url, timeoutMs: 5000, json: JSON });
const params: Param[] = [1, "a", { $json: '{"id": 9007199254740993}' }, { $bytea: "AA==" }, null];
export async function run(): Promise<string | undefined> {
  const result: QueryResult<{ one: number }> = await db.query<{ one: number }>("select 1 as one", params);
  const batch = await db.batch([{ sql: "select 1" }]);
  const inside = await db.transaction(async (tx) => (await tx.query<{ n: number }>("select 1 as n")).rows[0]?.n);
  try {
    await db.query("select broken");
  } catch (err) {
    if (err instanceof DatabaseError) return err.sqlstate;
  }
  const handler = poolgateRequestHandler({ auth: iamAuth({ audience: "poolgate", region: "us-east-1" }) });
  void handler;
  void asAwsSdkV2;
  return result.consistencyToken ?? batch[0]?.consistencyToken ?? String(inside);
}
`;

/** Runs against a gateway: a query, a batch and a transaction, printing what came back. */
const RUNNER = `
import { createClient } from "@poolgate/client";
const db = createClient({ url: process.argv[2] });
await db.query("create table visits (id int primary key, n int not null)");
const batch = await db.batch([
  { sql: "insert into visits values ($1, $2)", params: [1, 0] },
  { sql: "update visits set n = n + 1 where id = $1", params: [1] },
]);
const counted = await db.transaction(async (tx) => {
  await tx.query("update visits set n = n + 1 where id = $1", [1]);
  return (await tx.query("select n from visits where id = $1", [1])).rows[0].n;
});
const read = await db.query("select id, n, '{\\"id\\": 9007199254740993}'::jsonb as doc from visits");
console.log(JSON.stringify({ batch: batch.map((r) => [r.command, r.rowCount, typeof r.consistencyToken]), counted, rows: read.rows, token: typeof db.consistencyToken }));
await db.close();
`;

function run(file: string, args: string[], cwd: string): string {
  return execFileSync(file, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), "poolgate-client-user-"));
  const packed = run("npm", ["pack", "--pack-destination", project, "--json", "--silent"], join(root, "client"));
  rmSync(join(root, "client/dist"), { recursive: true, force: true });
  tarball = join(project, (JSON.parse(packed) as { filename: string }[])[0]?.filename ?? "");
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "someone-elses-lambda", private: true, type: "module" }));
  run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--silent", tarball], project);
  db = await createTestDatabase();
  gw = await startTestGateway({ clusters: { default: { writerUrl: db.url } } });
}, 180_000);

afterAll(async () => {
  await gw?.stop();
  await db?.drop();
  if (project) rmSync(project, { recursive: true, force: true });
});

describe("the client package, installed from its tarball outside the repository", () => {
  it("ships compiled JavaScript and declarations only, and installs only what a Lambda needs", () => {
    const listed = run("tar", ["-tzf", tarball], project).trim().split("\n");
    expect(listed).toContain("package/dist/index.js");
    expect(listed).toContain("package/dist/index.d.ts");
    expect(listed.filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))).toEqual([]);
    const installed = readdirSync(join(project, "node_modules"));
    for (const gatewayOnly of ["fastify", "pg", "mysql2", "zod", "pino", "@electric-sql"]) expect(installed).not.toContain(gatewayOnly);
    const sizeOf = (path: string): number =>
      statSync(path).isDirectory() ? readdirSync(path).reduce((total, entry) => total + sizeOf(join(path, entry)), 0) : statSync(path).size;
    // Measured here: 25 packages, 6.4 MB (undici, the SDK's SigV4 signer, HTTP handler and credential chain); the gateway's install is over 100 MB.
    const bytes = sizeOf(join(project, "node_modules"));
    console.log(`installed: ${installed.length} top-level entries, ${(bytes / 1024 / 1024).toFixed(1)} MB`);
    expect(bytes).toBeLessThan(15 * 1024 * 1024);
  });

  it.each([
    ["node16", { module: "node16", moduleResolution: "node16" }],
    ["nodenext", { module: "nodenext", moduleResolution: "nodenext" }],
    ["bundler", { module: "esnext", moduleResolution: "bundler" }],
    ["classic node (node10)", { module: "commonjs", moduleResolution: "node10" }],
  ])("type-checks a consumer under moduleResolution %s, from declarations only", (_name, options) => {
    writeFileSync(join(project, "consumer.ts"), CONSUMER);
    const tsconfig = { compilerOptions: { ...options, target: "es2022", lib: ["es2022"], types: [], strict: true, noEmit: true, skipLibCheck: false }, files: ["consumer.ts"] };
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify(tsconfig));
    let files: string;
    try {
      // One run: checks the consumer (an error fails the command) and lists every file it read.
      files = run(process.execPath, [tsc, "-p", "tsconfig.json", "--listFiles"], project);
    } catch (err) {
      throw new Error(`tsc failed: ${(err as { stdout?: string }).stdout ?? String(err)}`);
    }
    const fromPackage = files.split("\n").filter((file) => file.includes("node_modules/@poolgate/client/"));
    expect(fromPackage.length).toBeGreaterThan(0);
    expect(fromPackage.filter((file) => !file.endsWith(".d.ts"))).toEqual([]);
  });

  it("runs a query, a batch and a transaction against a gateway", async () => {
    writeFileSync(join(project, "runner.mjs"), RUNNER);
    // Asynchronously: the gateway answering it runs in this process.
    const { stdout } = await promisify(execFile)(process.execPath, ["runner.mjs", gw.baseUrl], { cwd: project, encoding: "utf8", timeout: 30_000 });
    const out = JSON.parse(stdout) as Record<string, unknown>;
    expect(out).toEqual({
      batch: [
        ["INSERT", 1, "string"],
        ["UPDATE", 1, "string"],
      ],
      counted: 2,
      // JSON.parse in the consumer rounds the document's id; the gateway sent every digit (see exact-values.test.ts).
      rows: [{ id: 1, n: 2, doc: { id: 9007199254740992 } }],
      token: "string",
    });
  });
});
