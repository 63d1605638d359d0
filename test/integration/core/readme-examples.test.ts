/**
 * The README's worked examples cannot rot: every `curl` of its "Three worked examples" section is sent,
 * in order, to a gateway on the local PostgreSQL, and its answer must be the one the README prints
 * beneath it (`# {...}`). Printed strings with `…` stand for what differs from run to run (transaction
 * ids, times); consistency tokens are positions of the server's WAL and are only checked to be there.
 * A request that uses a printed id or token gets the real one of this run.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");

/** One example call: where it goes, with what, and the answer the README prints for it (if any). */
interface ExampleCall {
  readonly command: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly printed?: unknown;
}

function exampleCalls(text: string): ExampleCall[] {
  const start = text.indexOf("## Three worked examples");
  const end = text.indexOf("\n## ", start + 1);
  const section = text.slice(start, end);
  const calls: ExampleCall[] = [];
  for (const block of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = (block[1] ?? "").replaceAll("\\\n", " ").split("\n");
    for (const line of lines) {
      if (line.startsWith("# ")) {
        const last = calls.pop();
        if (last) calls.push(Object.assign({}, last, { printed: JSON.parse(line.slice(2)) as unknown }));
        continue;
      }
      const url = /curl -s localhost:8080(\S+)/.exec(line);
      if (!url) continue;
      const headers: Record<string, string> = {};
      for (const header of line.matchAll(/-H '([^:]+): ([^']*)'/g)) headers[(header[1] ?? "").toLowerCase()] = header[2] ?? "";
      calls.push({ command: line.trim(), path: url[1] ?? "", headers, body: /-d '([^']*)'/.exec(line)?.[1] ?? "" });
    }
  }
  return calls;
}

/** Whether an answer is what the README prints: `…` in a printed string matches any string. */
function matchesPrinted(actual: unknown, printed: unknown, key = ""): boolean {
  if (key === "consistencyToken") return typeof actual === "string" && actual.length > 0;
  if (typeof printed === "string" && printed.includes("…")) return typeof actual === "string";
  if (Array.isArray(printed)) return Array.isArray(actual) && actual.length === printed.length && printed.every((item, i) => matchesPrinted(actual[i], item));
  if (printed !== null && typeof printed === "object") {
    if (actual === null || typeof actual !== "object") return false;
    const have = actual as Record<string, unknown>;
    const want = printed as Record<string, unknown>;
    const keys = Object.keys(want);
    return keys.length === Object.keys(have).length && keys.every((name) => matchesPrinted(have[name], want[name], name));
  }
  return actual === printed;
}

describe("the README's worked examples", () => {
  let db: TestDatabase;
  let gw: TestGateway;
  const calls = exampleCalls(readme);

  beforeAll(async () => {
    db = await createTestDatabase();
    gw = await startTestGateway({ clusters: { default: { writerUrl: db.url } } });
  });

  afterAll(async () => {
    await gw?.stop();
    await db?.drop();
  });

  it("are found: curls, most with the answer printed beneath", () => {
    expect(calls.length).toBeGreaterThanOrEqual(6);
    expect(calls.filter((call) => call.printed !== undefined).length).toBeGreaterThanOrEqual(5);
  });

  it("answer, in order, what the README prints", async () => {
    /** The printed ids and tokens a later request repeats, and this run's values for them. */
    const stand = new Map<string, string>();
    for (const call of calls) {
      let body = call.body;
      let path = call.path;
      for (const [printed, real] of stand) {
        body = body.replaceAll(printed, real);
        path = path.replaceAll(printed, real);
      }
      const response = await fetch(gw.baseUrl + path, { method: "POST", headers: Object.assign({}, call.headers), body });
      const answer = (await response.json()) as Record<string, unknown>;
      expect(response.ok, `${call.command} -> ${response.status} ${JSON.stringify(answer)}`).toBe(true);
      if (call.printed === undefined) continue;
      expect(matchesPrinted(answer, call.printed), `${call.command}\n  printed ${JSON.stringify(call.printed)}\n  got     ${JSON.stringify(answer)}`).toBe(true);
      const printed = call.printed as Record<string, unknown>;
      for (const name of ["transactionId", "consistencyToken"]) {
        if (typeof printed[name] === "string" && typeof answer[name] === "string") stand.set(printed[name], answer[name]);
      }
    }
    const { rows } = await db.admin.query<{ id: number; body: string }>("select id, body from notes order by id");
    expect(rows).toEqual([{ id: 1, body: "edited" }]);
  });
});
