/**
 * How deep a read goes: a real POST /v1/query on the local PostgreSQL, with the stack captured where the
 * engine's connection is asked to execute. From the route's handler to the engine it crosses at most ten
 * frames, through the one attempt (gateway/execution/attempt.ts); ARCHITECTURE.md lists them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresConnection } from "../../../gateway/engines/postgres/connection.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

let db: TestDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase();
  gw = await startTestGateway({ clusters: { default: { writerUrl: db.url } } });
});

afterAll(async () => {
  await gw?.stop();
  await db?.drop();
});

/** The frames (function, file) from the engine's execute up to the route's handler, engine first. */
async function framesOfRead(): Promise<string[]> {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back as it was, on the prototype
  const execute = PostgresConnection.prototype.execute;
  let stack: string | undefined;
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 100;
  PostgresConnection.prototype.execute = function (this: PostgresConnection, ...args: Parameters<typeof execute>) {
    stack ??= new Error("the engine's execute").stack;
    return execute.apply(this, args);
  };
  try {
    const answer = await gw.post("/v1/query", { sql: "select 1 as one" });
    expect(answer.status).toBe(200);
    expect(answer.body.rows).toEqual([{ one: 1 }]);
  } finally {
    PostgresConnection.prototype.execute = execute;
    Error.stackTraceLimit = limit;
  }
  if (stack === undefined) throw new Error("the read never reached the engine's execute");
  // "    at name (file:line:col)" or "    at file:line:col"; the first line is the message, the second this wrapper.
  const frames = stack
    .split("\n")
    .slice(2)
    .map((line) => line.trim().replace(/^at /, "").replace(/:\d+:\d+\)?$/, "").replace(/\(.*\/(gateway\/)/, "$1").replace(/ \(.*\/node_modules\//, " node_modules/"));
  const handler = frames.findIndex((frame) => frame.includes("gateway/http/routes/query.ts"));
  if (handler < 0) throw new Error(`no route handler on the stack:\n${frames.join("\n")}`);
  return ["PostgresConnection.execute gateway/engines/postgres/connection.ts", ...frames.slice(0, handler + 1)];
}

describe("a /v1/query read's way to the engine", () => {
  it("reaches the engine's execute within ten frames of the route's handler, through the one attempt", async () => {
    // A first read warms the pool, so the one measured takes the attempt's fast path as a steady load does.
    await gw.post("/v1/query", { sql: "select 1 as one" });
    const frames = await framesOfRead();
    expect(frames.length, frames.join("\n")).toBeLessThanOrEqual(10);
    expect(frames.filter((frame) => frame.includes("gateway/execution/attempt.ts")).length, frames.join("\n")).toBeGreaterThan(0);
    // No layer of the old hand-over between executor and leases is left on the way.
    expect(frames.join("\n")).not.toMatch(/leases\.ts|retry\.ts|promise-from\.ts/);
  });
});
