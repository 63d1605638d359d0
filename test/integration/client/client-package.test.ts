/**
 * The client as someone outside this repository gets it (test/support/packed-client.ts): packed,
 * installed from its tarball into a new project, with no runtime dependencies; a consumer type-checks
 * with `tsc` under moduleResolution node16, nodenext, bundler and classic node, from declarations only;
 * and a query, a batch and a transaction run against a gateway on the real local PostgreSQL.
 */
import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { installPackedClient, type PackedClientProject, repositoryRoot, sizeOf } from "../../support/packed-client.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

const tsc = join(repositoryRoot, "node_modules/typescript/bin/tsc");
let project: PackedClientProject;
let db: TestDatabase;
let gw: TestGateway;

/** A consumer using the public surface; it must type-check under every module resolution. */
const CONSUMER = `
import { createClient, DatabaseError, type QueryResult, type Param } from "@poolgate/client";
import { iamAuth } from "@poolgate/client/iam";
import { poolgateRequestHandler, asAwsSdkV2 } from "@poolgate/client/data-api";

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

beforeAll(async () => {
  project = installPackedClient();
  db = await createTestDatabase();
  gw = await startTestGateway({ clusters: { default: { writerUrl: db.url } } });
}, 180_000);

afterAll(async () => {
  await gw?.stop();
  await db?.drop();
  project?.remove();
});

describe("the client package, installed from its tarball outside the repository", () => {
  it("ships compiled JavaScript and declarations only, and installs as one package with no runtime dependencies", () => {
    const listed = project.run("tar", ["-tzf", project.tarball]).trim().split("\n");
    for (const entry of ["index", "iam", "data-api"]) {
      expect(listed).toContain(`package/dist/${entry}.js`);
      expect(listed).toContain(`package/dist/${entry}.d.ts`);
    }
    expect(listed).toContain("package/README.md");
    expect(listed.filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))).toEqual([]);
    const installed = readdirSync(join(project.dir, "node_modules")).filter((entry) => !entry.startsWith("."));
    expect(installed).toEqual(["@poolgate"]);
    expect(readdirSync(join(project.dir, "node_modules/@poolgate"))).toEqual(["client"]);
    // Measured here (undici and the AWS SDK's signer before, 25 packages and 9.0 MiB): printed for the record.
    const bytes = sizeOf(join(project.dir, "node_modules"));
    console.log(`installed: 1 package, ${(bytes / 1024).toFixed(0)} KiB`);
    expect(bytes).toBeLessThan(512 * 1024);
  });

  it.each([
    ["node16", { module: "node16", moduleResolution: "node16" }],
    ["nodenext", { module: "nodenext", moduleResolution: "nodenext" }],
    ["bundler", { module: "esnext", moduleResolution: "bundler" }],
    ["classic node (node10)", { module: "commonjs", moduleResolution: "node10" }],
  ])("type-checks a consumer under moduleResolution %s, from declarations only", (_name, options) => {
    project.write("consumer.ts", CONSUMER);
    const tsconfig = { compilerOptions: { ...options, target: "es2022", lib: ["es2022"], types: [], strict: true, noEmit: true, skipLibCheck: false }, files: ["consumer.ts"] };
    project.write("tsconfig.json", JSON.stringify(tsconfig));
    let files: string;
    try {
      // One run: checks the consumer (an error fails the command) and lists every file it read.
      files = project.run(process.execPath, [tsc, "-p", "tsconfig.json", "--listFiles"]);
    } catch (err) {
      throw new Error(`tsc failed: ${String(err)}`);
    }
    const fromPackage = files.split("\n").filter((file) => file.includes("node_modules/@poolgate/client/"));
    expect(fromPackage.length).toBeGreaterThan(0);
    expect(fromPackage.filter((file) => !file.endsWith(".d.ts"))).toEqual([]);
  });

  it("runs a query, a batch and a transaction against a gateway", async () => {
    project.write("runner.mjs", RUNNER);
    // Asynchronously: the gateway answering it runs in this process.
    const { stdout } = await promisify(execFile)(process.execPath, ["runner.mjs", gw.baseUrl], { cwd: project.dir, encoding: "utf8", timeout: 30_000 });
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
