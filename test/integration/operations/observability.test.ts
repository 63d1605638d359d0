/**
 * Metrics and logs on the real local PostgreSQL: GET /metrics (operator only) counts requests by
 * route, cluster, intent and outcome on both surfaces, retries by their reason, and shows every pool;
 * with log.requests, every answered request is one JSON line with its request id and principal, and
 * no line holds a parameter value or a token.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { captureLogs } from "../../support/log-capture.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

const TOKENS = { app: "app-token-0123456789abcdef0123456789", ops: "ops-token-0123456789abcdef0123456789" };
const app = bearer(TOKENS.app);
const ops = bearer(TOKENS.ops);
const SECRET_PARAM = "param-SENTINEL-4f2a91";

/** The value of one sample by metric name and exact label text (none: a metric without labels), or undefined. */
function sample(text: string, name: string, labels?: string): number | undefined {
  const prefix = labels === undefined ? `${name} ` : `${name}{${labels}}`;
  const line = text.split("\n").find((candidate) => candidate.startsWith(prefix));
  return line === undefined ? undefined : Number(line.split(" ").at(-1));
}

describe("metrics and request logs", () => {
  let db: TestDatabase;
  let gateway: TestGateway;
  let tokens: TokensFile;
  const { logger, lines } = captureLogs("info");

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.admin.query("create table counters (id int primary key, n int not null)");
    await db.admin.query("insert into counters values (1, 0)");
    tokens = writeTokensFile(TOKENS);
    gateway = await startTestGateway(
      {
        clusters: { default: { writerUrl: db.url } },
        pool: { maxSize: 4 },
        log: { requests: true },
        auth: { bearer: { tokensFile: tokens.path }, principals: { app: { clusters: { default: "read-write" } }, ops: { admin: true } } },
      },
      { logger },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await db?.drop();
    tokens?.remove();
  });

  it("serves Prometheus metrics to operators only", async () => {
    expect((await fetch(`${gateway.baseUrl}/metrics`)).status).toBe(401);
    expect((await fetch(`${gateway.baseUrl}/metrics`, { headers: app })).status).toBe(403);
    const answer = await fetch(`${gateway.baseUrl}/metrics`, { headers: ops });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toContain("text/plain");
    expect(await answer.text()).toContain("# TYPE poolgate_request_duration_seconds histogram");
  });

  it("shows a stall of the event loop at its full length in the lag metrics (sampled every 100 ms)", async () => {
    const scrape = async () => (await fetch(`${gateway.baseUrl}/metrics`, { headers: ops })).text();
    const stall = (ms: number) => {
      const stalledUntil = performance.now() + ms;
      while (performance.now() < stalledUntil) {
        // The gateway runs in this process: its event loop is held here.
      }
    };
    // The sampler's timer, overdue after a stall longer than its interval, runs in the loop's next timers
    // phase; so does a timer set now, and an immediate set from that one runs once the phase is over.
    const afterOverdueTimers = () => new Promise((resolve) => setTimeout(() => setImmediate(resolve), 0));
    // A scrape reads and resets the loop's delay histogram, and Node drops the first interval after a
    // reset (it only sets where the next one starts): a first, shorter stall makes that sample happen,
    // then the stall to see, then the sample that records it.
    await scrape();
    stall(150);
    await afterOverdueTimers();
    stall(400);
    await afterOverdueTimers();
    const text = await scrape();
    expect(sample(text, "poolgate_nodejs_eventloop_lag_max_seconds")).toBeGreaterThanOrEqual(0.3);
  });

  it("counts requests by route, cluster, intent and outcome, retries by reason, and shows the pools", async () => {
    for (let i = 0; i < 5; i++) expect((await gateway.post("/v1/query", { sql: "select $1::text as v", params: [SECRET_PARAM] }, app)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await gateway.post("/v1/query", { sql: "update counters set n = n where id = 1" }, app)).status).toBe(200);
    expect((await gateway.post("/v1/query", { sql: "select * from no_such_table" }, app)).status).toBe(400);
    expect((await gateway.post("/v1/query", { sql: "select 1" })).status).toBe(401);
    const dataApi = await gateway.post(
      "/Execute",
      { resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:c", secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:s", sql: "select 1" },
      app,
    );
    expect(dataApi.status).toBe(200);
    // A Data API statement the database refuses is still counted under the cluster and intent it was routed by.
    const refusedByDatabase = await gateway.post(
      "/Execute",
      { resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:c", secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:s", sql: "select * from no_such_table" },
      app,
    );
    expect(refusedByDatabase.status).toBe(400);
    // Ten serializable increments of one row at once: conflicts the gateway retries.
    const increments = await Promise.all(
      Array.from({ length: 10 }, () =>
        gateway.post("/v1/batch", { isolation: "serializable", statements: [{ sql: "update counters set n = n + 1 where id = 1" }] }, app),
      ),
    );
    expect(increments.map((answer) => answer.status)).toEqual(Array(10).fill(200));
    const retried = increments.reduce((sum, answer) => sum + (answer.body.attempts as number) - 1, 0);
    expect((await db.admin.query("select n from counters")).rows).toEqual([{ n: 10 }]);
    expect(retried).toBeGreaterThan(0);

    const text = await (await fetch(`${gateway.baseUrl}/metrics`, { headers: ops })).text();
    const count = (labels: string) => sample(text, "poolgate_request_duration_seconds_count", labels);
    expect(count('route="/v1/query",cluster="default",intent="read",outcome="ok"')).toBe(5);
    expect(count('route="/v1/query",cluster="default",intent="write",outcome="ok"')).toBe(3);
    expect(count('route="/v1/query",cluster="default",intent="read",outcome="DATABASE_ERROR"')).toBe(1);
    expect(count('route="/v1/query",cluster="none",intent="none",outcome="UNAUTHENTICATED"')).toBe(1);
    expect(count('route="/Execute",cluster="default",intent="read",outcome="ok"')).toBe(1);
    expect(count('route="/Execute",cluster="default",intent="read",outcome="DATABASE_ERROR"')).toBe(1);
    expect(count('route="/v1/batch",cluster="default",intent="write",outcome="ok"')).toBe(10);
    expect(sample(text, "poolgate_retries_total", 'cluster="default",reason="SERIALIZATION_FAILURE"') ?? 0).toBe(retried);
    expect(sample(text, "poolgate_pool_connections", 'cluster="default",endpoint="default/writer",state="idle"')).toBe(4);
    expect(sample(text, "poolgate_pool_max_connections", 'cluster="default",endpoint="default/writer"')).toBe(4);
    expect(sample(text, "poolgate_pool_acquire_wait_seconds_count", 'cluster="default",endpoint="default/writer"')).toBeGreaterThanOrEqual(19);
    expect(sample(text, "poolgate_endpoint_role", 'cluster="default",endpoint="default/writer",role="primary"')).toBe(1);
    expect(sample(text, "poolgate_pool_connection_events_total", 'cluster="default",endpoint="default/writer",event="created"')).toBe(4);
    expect(text).toContain("poolgate_process_cpu_seconds_total");
  });

  it("logs each answered request as one JSON line with its request id and principal, and nothing secret", async () => {
    const answer = await gateway.post("/v1/query", { sql: "select $1::text", params: [SECRET_PARAM] }, { ...app, "x-request-id": "req-observed-1" });
    expect(answer.status).toBe(200);
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.find((record) => record.requestId === "req-observed-1")).toMatchObject({
      msg: "request",
      route: "/v1/query",
      status: 200,
      principal: "app",
      cluster: "default",
      intent: "read",
      outcome: "ok",
    });
    const refused = records.find((record) => record.msg === "request" && record.outcome === "UNAUTHENTICATED");
    expect(refused).toMatchObject({ principal: "anonymous", status: 401 });
    const all = lines.join("\n");
    expect(all).not.toContain(SECRET_PARAM);
    expect(all).not.toContain(TOKENS.app);
    expect(all).not.toContain(TOKENS.ops);
  });
});
