/**
 * The client's README (client/README.md, shipped in the tarball) cannot rot: every ```ts example in it
 * is written as a module of a project that installed the packed client (test/support/packed-client.ts)
 * and type-checked with `tsc` under nodenext and bundler resolution, strict.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installPackedClient, type PackedClientProject, repositoryRoot } from "../../support/packed-client.js";

const tsc = join(repositoryRoot, "node_modules/typescript/bin/tsc");
const readme = readFileSync(join(repositoryRoot, "client/README.md"), "utf8");
/** The README's TypeScript examples, in order. */
const examples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1] ?? "");
/** What the examples import besides the client, at the repository's versions (from the npm cache). */
const devDependencies = (JSON.parse(readFileSync(join(repositoryRoot, "package.json"), "utf8")) as { devDependencies: Record<string, string> }).devDependencies;
const alongside = ["@aws-sdk/client-rds-data", "@types/node"].map((name) => `${name}@${devDependencies[name] ?? "missing"}`);

let project: PackedClientProject;

beforeAll(() => {
  project = installPackedClient({ extra: alongside });
}, 300_000);

afterAll(() => project?.remove());

describe("the client's README", () => {
  it("has examples of install, a query, a transaction, a stream, keys, errors, deadlines and both kinds of auth", () => {
    expect(examples.length).toBeGreaterThanOrEqual(8);
    for (const topic of ["db.query", "db.transaction", "db.stream", "idempotencyKey", "DatabaseError", "getRemainingTimeInMillis", "Bearer", "iamAuth"]) {
      expect(examples.some((example) => example.includes(topic)), topic).toBe(true);
    }
  });

  it.each([
    ["nodenext", { module: "nodenext", moduleResolution: "nodenext" }],
    ["bundler", { module: "esnext", moduleResolution: "bundler" }],
  ])("type-checks every example against the packed package under %s resolution", (_name, options) => {
    const files = examples.map((example, index) => {
      project.write(`example-${index + 1}.ts`, example);
      return `example-${index + 1}.ts`;
    });
    const compilerOptions = { ...options, target: "es2022", lib: ["es2022"], types: ["node"], strict: true, noEmit: true, skipLibCheck: true, isolatedModules: true };
    project.write("tsconfig.json", JSON.stringify({ compilerOptions, files }));
    expect(() => project.run(process.execPath, [tsc, "-p", "tsconfig.json"])).not.toThrow();
  });
});
