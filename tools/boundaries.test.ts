/**
 * The import-boundary rules (.dependency-cruiser.cjs, run by `npm run lint`) fail on imports that cross
 * ARCHITECTURE.md's table and pass on those it allows: a small tree of files laid out as the gateway's
 * folders, each named for the one import it makes, cruised with the repository's own rules.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("..", import.meta.url));
const depcruise = join(repo, "node_modules", "dependency-cruiser", "bin", "dependency-cruise.mjs");

/** Each fixture file: its path and its text. Targets exist so every import resolves. */
const FIXTURE: Record<string, string> = {
  "tsconfig.json": JSON.stringify({ compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true }, include: ["schemas", "gateway", "client"] }),
  "schemas/query.ts": "export type Param = string;\n",
  "gateway/clock.ts": "export const now = (): number => 0;\n",
  // The hub importing the topology that emits into it (the events.ts <-> topology/ cycle, refused).
  "gateway/events.ts": 'import type { Endpoint } from "./topology/endpoint.js";\nexport type Hub = Endpoint;\n',
  "gateway/engines/engine.ts": "export interface StatementResult { rows: unknown[][] }\n",
  "gateway/engines/json-text.ts": "export class JsonText { constructor(readonly text: string) {} }\n",
  "gateway/engines/postgres/values.ts": "export const parse = (text: string): string => text;\n",
  "gateway/topology/endpoint.ts": "export class Endpoint {}\n",
  "gateway/routing/router.ts": 'import { Endpoint } from "../topology/endpoint.js";\nexport const route = (): Endpoint => new Endpoint();\n',
  "gateway/execution/executor.ts": 'import { route } from "../routing/router.js";\nexport const run = () => route();\n',
  "gateway/http/server.ts": "export const listen = (): void => undefined;\n",
  // Allowed: http/ names an engine's result type, and reads JSON kept as text.
  "gateway/http/result-type-allowed.ts": 'import type { StatementResult } from "../engines/engine.js";\nimport { JsonText } from "../engines/json-text.js";\nexport const text = (r: StatementResult): JsonText => new JsonText(String(r.rows.length));\n',
  // Forbidden, one crossing each:
  "gateway/pool/reads-topology.ts": 'import { Endpoint } from "../topology/endpoint.js";\nexport const e = new Endpoint();\n',
  "gateway/engines/reads-http.ts": 'import { listen } from "../http/server.js";\nexport const l = listen;\n',
  "gateway/http/runs-a-dialect.ts": 'import { parse } from "../engines/postgres/values.js";\nexport const p = parse;\n',
  "gateway/routing/circle-a.ts": 'import { b } from "./circle-b.js";\nexport const a = (): number => b() + 1;\n',
  "gateway/routing/circle-b.ts": 'import { a } from "./circle-a.js";\nexport const b = (): number => 0;\nexport const c = (): number => a();\n',
  "gateway/newroom/unplaced.ts": 'import { now } from "../clock.js";\nexport const t = now;\n',
  "schemas/reads-gateway.ts": 'import { now } from "../gateway/clock.js";\nexport const t = now;\n',
  "client/reads-gateway.ts": 'import { now } from "../gateway/clock.js";\nexport const t = now;\n',
};

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

function cruise(cwd: string, outputType: "err" | "json"): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [depcruise, "schemas", "gateway", "client", "--config", join(repo, ".dependency-cruiser.cjs"), "--output-type", outputType],
      { cwd, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout) => resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout }),
    );
  });
}

let root: string;
let violations: Violation[];
let exitCode: number;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "poolgate-boundaries-"));
  for (const [path, text] of Object.entries(FIXTURE)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  // As `npm run lint` runs it (the exit code), and as JSON (which rule fired where).
  const [lint, json] = await Promise.all([cruise(root, "err"), cruise(root, "json")]);
  exitCode = lint.code;
  const result = JSON.parse(json.stdout) as { summary: { violations: Violation[] } };
  violations = result.summary.violations;
}, 120_000);

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** The rules that fired on an import from one file. */
const rulesFrom = (from: string): string[] => violations.filter((violation) => violation.from === from).map((violation) => violation.rule.name).sort();

describe("the import-boundary lint", () => {
  it("fails the run when an import crosses a boundary", () => {
    expect(exitCode).not.toBe(0);
  });

  it("refuses a pool module that imports the topology (a sibling of its layer)", () => {
    expect(rulesFrom("gateway/pool/reads-topology.ts")).toEqual(["layer:gateway/pool/"]);
  });

  it("refuses an engine module that imports HTTP (a higher layer)", () => {
    expect(rulesFrom("gateway/engines/reads-http.ts")).toEqual(["layer:gateway/engines/"]);
  });

  it("refuses an HTTP module that runs an engine's dialect code", () => {
    expect(rulesFrom("gateway/http/runs-a-dialect.ts")).toEqual(["http-engine-types-only", "http-knows-no-engine"]);
  });

  it("refuses the event hub importing the topology that emits into it", () => {
    expect(rulesFrom("gateway/events.ts")).toEqual(["layer:gateway/events.ts"]);
  });

  it("refuses a circle of imports", () => {
    const circles = violations.filter((violation) => violation.rule.name === "no-circular").map(({ from, to }) => [from, to]);
    expect(circles.length).toBeGreaterThan(0);
    for (const [from, to] of circles) expect([from, to].sort()).toEqual(["gateway/routing/circle-a.ts", "gateway/routing/circle-b.ts"]);
  });

  it("refuses a gateway folder that has no row in the layer table", () => {
    expect(rulesFrom("gateway/newroom/unplaced.ts")).toEqual(["layer:unplaced"]);
  });

  it("keeps the wire types and the client SDK apart from the gateway", () => {
    expect(rulesFrom("schemas/reads-gateway.ts")).toEqual(["layer:schemas/", "schemas-stand-alone"]);
    expect(rulesFrom("client/reads-gateway.ts")).toEqual(["client-knows-wire-types-only"]);
  });

  it("allows what the table allows: downward imports, and engine result types in HTTP", () => {
    for (const allowed of ["gateway/routing/router.ts", "gateway/execution/executor.ts", "gateway/http/result-type-allowed.ts"]) {
      expect(rulesFrom(allowed), allowed).toEqual([]);
    }
  });
});
