/**
 * A stream's own time rules, on the local PostgreSQL (the rules live in the HTTP layer and the shared
 * session lifecycle, the same for both engines): a caller that stops taking rows loses the stream
 * after streams.idleTimeoutMs, and a stream past streams.maxDurationMs ends with a STATEMENT_TIMEOUT line;
 * either way the session goes back to the pool.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";
import { waitFor } from "../../support/wait-for.js";

function openStream(baseUrl: string, sql: string): Promise<http.IncomingMessage> {
  const payload = JSON.stringify({ sql, rowMode: "array" });
  return new Promise((resolve, reject) => {
    const request = http.request(`${baseUrl}/v1/query/stream`, { method: "POST", headers: { "content-type": "application/json" }, agent: false });
    request.on("response", resolve);
    request.on("error", reject);
    request.end(payload);
  });
}

describe("a stream's time rules", () => {
  let db: TestDatabase;
  let gateway: TestGateway;
  const active = async (): Promise<number> => (await gateway.get("/healthz")).body.clusters.default.pool.active;

  beforeAll(async () => {
    db = await createTestDatabase();
    gateway = await startTestGateway({
      clusters: { default: { writerUrl: db.url } },
      pool: { maxSize: 2 },
      streams: { fetchRows: 10, idleTimeoutMs: 300, maxDurationMs: 1500 },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await db?.drop();
  });

  it("cuts the response of a caller that takes nothing for streams.idleTimeoutMs, and frees its session", async () => {
    const response = await openStream(gateway.baseUrl, "select g, repeat('x', 500) from generate_series(1, 1000000) g");
    expect(response.statusCode).toBe(200);
    response.pause();
    let cut = false;
    response.on("error", () => (cut = true));
    response.on("aborted", () => (cut = true));
    response.on("close", () => (cut = true));
    await waitFor(async () => (await active()) === 0, 10000, "the session back in the pool");
    // Reading on drains what was buffered and then finds the body cut, without an end line.
    let text = "";
    response.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    response.resume();
    await waitFor(() => cut, 10000, "the response to be cut");
    expect(text.endsWith('"attempts":1}\n')).toBe(false);
  });

  it("ends a stream still running after streams.maxDurationMs with a STATEMENT_TIMEOUT line", async () => {
    // The first rows come at once; from row 100 on, each takes 50 ms.
    const response = await openStream(gateway.baseUrl, "select g, case when g > 100 then pg_sleep(0.05) end from generate_series(1, 100000) g");
    expect(response.statusCode).toBe(200);
    let text = "";
    response.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    await new Promise((resolve) => response.on("end", resolve));
    const lines = text.trim().split("\n");
    expect(lines.length).toBeGreaterThan(100);
    const last = JSON.parse(lines.at(-1) as string);
    expect(last.error.code).toBe("STATEMENT_TIMEOUT");
    expect(last.error.message).toContain("streams.maxDurationMs");
    await waitFor(async () => (await active()) === 0, 10000, "the session back in the pool");
  });
});
