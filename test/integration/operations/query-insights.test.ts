/**
 * Query insights per principal against real servers: a gateway with a PostgreSQL and a MariaDB
 * cluster and bearer-token principals, traffic from two callers, then GET /v1/admin/insights (and its
 * filters), the status page's table and the bounded poolgate_insight_* metrics; the route refused to
 * non-operators. A second gateway with insights off answers that they are off and counts nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InsightPrincipal, InsightsResponse, InsightStatement } from "../../../schemas/insights.js";
import { bearer, type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase, type TestMysqlDatabase } from "../../support/mysql.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

const TOKENS = {
  operator: "insights-operator-0123456789abcdef",
  alice: "insights-alice-0123456789abcdef0123",
  bob: "insights-bob-0123456789abcdef012345",
};

let pgDb: TestDatabase;
let myDb: TestMysqlDatabase;
let tokens: TokensFile;
let gw: TestGateway;

const as = (who: keyof typeof TOKENS) => bearer(TOKENS[who]);

async function run(who: keyof typeof TOKENS, cluster: string, sql: string, params?: unknown[]): Promise<number> {
  const answer = await gw.post("/v1/query", { cluster, sql, params }, as(who));
  return answer.status;
}

async function insights(query = ""): Promise<InsightsResponse> {
  const answer = await gw.get(`/v1/admin/insights${query}`, as("operator"));
  expect(answer.status).toBe(200);
  return answer.body as InsightsResponse;
}

function principal(answer: InsightsResponse, cluster: string, name: string): InsightPrincipal {
  const found = answer.principals.find((entry) => entry.cluster === cluster && entry.principal === name);
  if (found === undefined) throw new Error(`no insights for ${name} on ${cluster}: ${JSON.stringify(answer.principals.map((p) => [p.cluster, p.principal]))}`);
  return found;
}

function statement(entry: InsightPrincipal, sample: string): InsightStatement {
  const found = entry.statements.find((row) => row.sample === sample);
  if (found === undefined) throw new Error(`no statement "${sample}": ${JSON.stringify(entry.statements.map((row) => row.sample))}`);
  return found;
}

describe("query insights per principal", () => {
  beforeAll(async () => {
    pgDb = await createTestDatabase();
    myDb = await createTestMysqlDatabase();
    await pgDb.admin.query("create table items (id serial primary key, note text)");
    await myDb.query("create table items (id int auto_increment primary key, note text)");
    tokens = writeTokensFile(TOKENS);
    gw = await startTestGateway({
      clusters: { pg: { writerUrl: pgDb.url }, my: { writerUrl: myDb.url } },
      defaultCluster: "pg",
      pool: { maxSize: 3, minIdle: 0 },
      auth: {
        bearer: { tokensFile: tokens.path },
        principals: {
          operator: { admin: true },
          alice: { clusters: { pg: "read-write", my: "read-write" } },
          bob: { clusters: { pg: "read-write", my: "read-write" } },
        },
      },
      insights: { enabled: true, topPerPrincipal: 4, metricsTop: 2 },
    });
    // alice: one statement with different literals, a failing one, and more fingerprints than her limit.
    for (let id = 1; id <= 5; id++) expect(await run("alice", "pg", `select id, note from items where id = ${id}`)).toBe(200);
    expect(await run("alice", "pg", "select * from no_such_table")).toBe(400);
    expect(await run("alice", "pg", "select * from no_such_table")).toBe(400);
    for (const sql of ["select 1 as one", "select now()", "select count(*) from items", "select current_user"]) expect(await run("alice", "pg", sql)).toBe(200);
    // bob: writes whose literals must not show, and a parameterised read.
    for (const note of ["secret-one", "secret-two", "secret-three"]) expect(await run("bob", "pg", `insert into items (note) values ('${note}')`)).toBe(200);
    expect(await run("bob", "pg", "select note from items where id = $1", [1])).toBe(200);
    // MariaDB: the reader's digest.
    for (const id of [7, 8, 9]) expect(await run("alice", "my", `select note from items where id = ${id} and note <> 'hidden-${id}'`)).toBe(200);
    expect(await run("bob", "my", "insert into items (note) values ('a'), ('b')")).toBe(200);
    // A batch counts as one piece of work with both statements' samples.
    const batch = await gw.post(
      "/v1/batch",
      { cluster: "pg", statements: [{ sql: "insert into items (note) values ('batch-secret')" }, { sql: "select count(*) from items where note = 'x'" }] },
      as("bob"),
    );
    expect(batch.status).toBe(200);
    // A stream is counted when it ends, with the rows it handed on.
    const stream = await fetch(`${gw.baseUrl}/v1/query/stream`, {
      method: "POST",
      headers: { "content-type": "application/json", ...as("bob") },
      body: JSON.stringify({ cluster: "pg", sql: "select g from generate_series(1, 25) as g where g > 0" }),
    });
    expect(stream.status).toBe(200);
    expect((await stream.text()).trim().split("\n").length).toBeGreaterThan(1);
    // Statements of an interactive transaction count like any other (on MariaDB here).
    const begun = await gw.post("/v1/transactions", { cluster: "my" }, as("bob"));
    expect(begun.status).toBe(201);
    const id = begun.body.transactionId as string;
    for (const note of ["tx-secret-1", "tx-secret-2"]) {
      expect((await gw.post("/v1/query", { cluster: "my", sql: `update items set note = '${note}' where id = 1`, transactionId: id }, as("bob"))).status).toBe(200);
    }
    expect((await gw.post(`/v1/transactions/${id}/commit`, {}, as("bob"))).status).toBe(200);
  }, 60000);

  afterAll(async () => {
    await gw?.stop();
    tokens?.remove();
    await pgDb?.drop();
    await myDb?.drop();
  });

  it("groups a principal's PostgreSQL statements by fingerprint, with literals removed from the sample", async () => {
    const alice = principal(await insights(), "pg", "alice");
    const byId = statement(alice, "select id, note from items where id = $1");
    expect(byId.calls).toBe(5);
    expect(byId.rows).toBe(0);
    expect(byId.errors).toEqual({});
    expect(byId.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(byId.totalMs).toBeGreaterThan(0);
    expect(byId.databaseMs).toBeGreaterThan(0);
    expect(byId.databaseMs).toBeLessThanOrEqual(byId.totalMs);
    expect(byId.waitMs).toBeCloseTo(byId.totalMs - byId.databaseMs, 2);
    expect(byId.meanMs).toBeCloseTo(byId.totalMs / 5, 2);
    expect(byId.p99Ms).toBeGreaterThan(0);
    expect(byId.p99Ms).toBeLessThanOrEqual(byId.totalMs);
    expect(Date.parse(byId.lastSeen)).toBeGreaterThan(Date.now() - 60000);
  });

  it("counts failures by registry code and SQLSTATE", async () => {
    const alice = principal(await insights(), "pg", "alice");
    const failing = alice.statements.find((row) => row.errors["DATABASE_ERROR/42P01"] !== undefined) ?? alice.statements.find((row) => row.fingerprint === "(other)");
    // Either listed on its own or merged into (other), its two failures are counted.
    expect(failing?.errors["DATABASE_ERROR/42P01"]).toBe(2);
  });

  it("keeps at most topPerPrincipal fingerprints per principal and counts the rest as (other)", async () => {
    const alice = principal(await insights(), "pg", "alice");
    const listed = alice.statements.filter((row) => row.fingerprint !== "(other)");
    expect(listed.length).toBeLessThanOrEqual(4);
    const other = alice.statements.find((row) => row.fingerprint === "(other)");
    expect(other).toBeDefined();
    // Six fingerprints, four kept: every call is counted somewhere.
    expect(alice.calls).toBe(5 + 2 + 4);
    expect(alice.statements.reduce((sum, row) => sum + row.calls, 0)).toBe(alice.calls);
    // limit=1 lists the top one and merges the rest.
    const limited = principal(await insights("?principal=alice&cluster=pg&limit=1"), "pg", "alice");
    expect(limited.statements.map((row) => row.fingerprint).filter((id) => id !== "(other)")).toHaveLength(1);
    expect(limited.calls).toBe(alice.calls);
  });

  it("never shows a literal the caller sent, and counts rows written", async () => {
    const answer = await insights();
    expect(JSON.stringify(answer)).not.toMatch(/secret|hidden/);
    expect(JSON.stringify(await insights("?cluster=my"))).not.toMatch(/secret|hidden/);
    const bob = principal(answer, "pg", "bob");
    const insert = statement(bob, "insert into items (note) values ($1)");
    expect(insert.calls).toBe(3);
    expect(insert.rows).toBe(3);
    const batch = bob.statements.find((row) => row.sample.includes("\n"));
    expect(batch?.sample).toBe("insert into items (note) values ($1);\nselect count(*) from items where note = $1;");
    expect(batch?.calls).toBe(1);
  });

  it("counts a stream when it ends, with the rows it handed on", async () => {
    const bob = principal(await insights("?principal=bob&cluster=pg"), "pg", "bob");
    const stream = statement(bob, "select g from generate_series($1, $2) as g where g > $3");
    expect(stream.calls).toBe(1);
    expect(stream.rows).toBe(25);
    expect(stream.databaseMs).toBeGreaterThan(0);
  });

  it("fingerprints MariaDB statements with the MySQL reader's digest", async () => {
    const answer = await insights("?cluster=my");
    expect(answer.principals.every((entry) => entry.cluster === "my")).toBe(true);
    const alice = principal(answer, "my", "alice");
    const read = statement(alice, "select note from items where id = ? and note <> ?");
    expect(read.calls).toBe(3);
    expect(read.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(read.databaseMs).toBeGreaterThan(0);
    const bob = principal(answer, "my", "bob");
    expect(statement(bob, "insert into items (note) values (?), (?)").rows).toBe(2);
    const update = statement(bob, "update items set note = ? where id = ?");
    expect(update.calls).toBe(2);
    expect(update.rows).toBe(2);
    expect(update.databaseMs).toBeGreaterThan(0);
  });

  it("filters by principal and by time window, and refuses a bad window", async () => {
    const bobOnly = await insights("?principal=bob");
    expect(bobOnly.principals.map((entry) => entry.principal)).toEqual(["bob", "bob"].slice(0, bobOnly.principals.length));
    expect(new Set(bobOnly.principals.map((entry) => entry.cluster))).toEqual(new Set(["pg", "my"]));
    const past = await insights(`?until=${encodeURIComponent(new Date(Date.now() - 3600_000).toISOString())}`);
    expect(past.principals).toEqual([]);
    const future = await insights(`?since=${encodeURIComponent(new Date(Date.now() + 3600_000).toISOString())}`);
    expect(future.principals).toEqual([]);
    const recent = await insights(`?since=${encodeURIComponent(new Date(Date.now() - 600_000).toISOString())}&principal=alice&cluster=my`);
    expect(recent.principals).toHaveLength(1);
    const bad = await gw.get("/v1/admin/insights?since=yesterday", as("operator"));
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("INVALID_REQUEST");
    const unknown = await gw.get("/v1/admin/insights?colour=red", as("operator"));
    expect(unknown.status).toBe(400);
  });

  it("is refused to callers who are not operators", async () => {
    const refused = await gw.get("/v1/admin/insights", as("alice"));
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("FORBIDDEN");
    const anonymous = await gw.get("/v1/admin/insights");
    expect(anonymous.status).toBe(401);
  });

  it("shows the top statements on the status answer and in bounded metrics", async () => {
    const status = await gw.get("/v1/admin/status", as("operator"));
    expect(status.status).toBe(200);
    expect(status.body.insights.enabled).toBe(true);
    expect(status.body.insights.top.length).toBeGreaterThan(0);
    expect(status.body.insights.top.length).toBeLessThanOrEqual(10);
    const metrics = await fetch(`${gw.baseUrl}/metrics`, { headers: as("operator") });
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    const calls = text.split("\n").filter((line) => line.startsWith("poolgate_insight_calls{"));
    // metricsTop: 2 — however many fingerprints there are.
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatch(/principal="(alice|bob)",fingerprint="[^"]+"} \d+/);
  });
});

describe("query insights when off", () => {
  let off: TestGateway;
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    off = await startTestGateway({ clusters: { default: { writerUrl: db.url } }, pool: { maxSize: 2, minIdle: 0 } });
  });

  afterAll(async () => {
    await off?.stop();
    await db?.drop();
  });

  it("answers that insights are off and counts nothing", async () => {
    expect((await off.post("/v1/query", { sql: "select 1" })).status).toBe(200);
    const answer = await off.get("/v1/admin/insights");
    expect(answer.status).toBe(200);
    expect(answer.body.enabled).toBe(false);
    expect(answer.body.principals).toEqual([]);
    const metrics = await fetch(`${off.baseUrl}/metrics`);
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toContain("poolgate_request_duration_seconds");
    expect(text).not.toContain("poolgate_insight_");
  });
});
