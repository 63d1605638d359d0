/**
 * Bearer-token authentication and per-principal authorisation on both HTTP surfaces, against the real
 * local PostgreSQL: who may call, which clusters, the operator routes, transactions that belong to
 * their principal, requests in flight per principal, and tokens rotated in their file.
 */
import { ExecuteStatementCommand } from "@aws-sdk/client-rds-data";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../../gateway/config/load.js";
import { bearer, type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { bearerAuth, dataApiClient } from "../../support/data-api-client.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, gatewaySessions, type TestDatabase } from "../../support/postgres.js";
import { waitFor } from "../../support/wait-for.js";

const TOKENS = {
  writer: "writer-token-0123456789abcdef0123",
  reader: "reader-token-0123456789abcdef0123",
  operator: "operator-token-0123456789abcdef01",
  stranger: "stranger-token-0123456789abcdef01",
  narrow: "narrow-token-0123456789abcdef01234",
};
const RESOURCE = "arn:aws:rds:us-east-1:123456789012:cluster:app";
const SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:app";

describe("bearer tokens and per-principal grants", () => {
  let db: TestDatabase;
  let gateway: TestGateway;
  let tokens: TokensFile;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.admin.query("create table notes (id serial primary key, body text not null)");
    tokens = writeTokensFile(TOKENS);
    gateway = await startTestGateway({
      clusters: { default: { writerUrl: db.url } },
      auth: {
        bearer: { tokensFile: tokens.path },
        principals: {
          writer: { clusters: { default: "read-write" } },
          reader: { clusters: { "*": "read-only" } },
          operator: { admin: true },
          narrow: { clusters: { default: "read-write" }, maxInFlight: 2 },
        },
      },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await db?.drop();
    tokens?.remove();
  });

  it("refuses a call without a credential, with a wrong token, or with an unknown scheme", async () => {
    const none = await gateway.post("/v1/query", { sql: "select 1" });
    expect(none.status).toBe(401);
    expect(none.body.error).toMatchObject({ code: "UNAUTHENTICATED", retryable: false });
    expect(none.body.error.message).toContain("Bearer <token>");
    const wrong = await gateway.post("/v1/query", { sql: "select 1" }, bearer("not-a-real-token-0123456789abcdef"));
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.message).toBe("unknown bearer token");
    const scheme = await gateway.post("/v1/query", { sql: "select 1" }, { "x-poolgate-auth": "Basic dXNlcjpwYXNz" });
    expect(scheme.status).toBe(401);
    const iam = await gateway.post("/v1/query", { sql: "select 1" }, { "x-poolgate-auth": "AWS-STS e30=" });
    expect(iam.body.error.message).toContain("IAM proofs are not accepted");
  });

  it("answers a known token on the native API, through x-poolgate-auth or Authorization", async () => {
    const viaHeader = await gateway.post("/v1/query", { sql: "select 1 as one" }, bearer(TOKENS.writer));
    expect(viaHeader.status).toBe(200);
    expect(viaHeader.body.rows).toEqual([{ one: 1 }]);
    const viaAuthorization = await gateway.post("/v1/query", { sql: "select 2 as two" }, { authorization: `Bearer ${TOKENS.writer}` });
    expect(viaAuthorization.body.rows).toEqual([{ two: 2 }]);
  });

  it("refuses a principal without a grant on the cluster, and a token with no principal entry", async () => {
    const stranger = await gateway.post("/v1/query", { sql: "select 1" }, bearer(TOKENS.stranger));
    expect(stranger.status).toBe(403);
    expect(stranger.body.error).toMatchObject({ code: "FORBIDDEN" });
    expect(stranger.body.error.message).toContain("stranger");
    const operatorOnData = await gateway.post("/v1/query", { sql: "select 1" }, bearer(TOKENS.operator));
    expect(operatorOnData.status).toBe(403);
    expect(operatorOnData.body.error.message).toContain('no access to cluster "default"');
  });

  it("opens the operator routes to admin principals only, and readiness to everyone", async () => {
    expect((await gateway.get("/healthz")).status).toBe(401);
    expect((await gateway.get("/healthz", bearer(TOKENS.writer))).status).toBe(403);
    const health = await gateway.get("/healthz", bearer(TOKENS.operator));
    expect(health.status).toBe(200);
    expect(health.body.status).toBe("ok");
    expect((await gateway.post("/v1/admin/topology/refresh", {}, bearer(TOKENS.reader))).status).toBe(403);
    expect((await gateway.get("/readyz")).status).toBe(200);
    expect((await gateway.get("/openapi.json")).status).toBe(200);
    // Unknown paths do not tell an unauthenticated caller which routes exist.
    expect((await gateway.get("/v1/nothing-here")).status).toBe(401);
  });

  it("keeps an interactive transaction to the principal that began it", async () => {
    const begun = await gateway.post("/v1/transactions", {}, bearer(TOKENS.writer));
    expect(begun.status).toBe(201);
    const id = begun.body.transactionId as string;
    const foreign = await gateway.post("/v1/query", { sql: "insert into notes (body) values ('x')", transactionId: id }, bearer(TOKENS.narrow));
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("TRANSACTION_NOT_FOUND");
    const foreignCommit = await gateway.post(`/v1/transactions/${id}/commit`, undefined, bearer(TOKENS.narrow));
    expect(foreignCommit.body.error.code).toBe("TRANSACTION_NOT_FOUND");
    const own = await gateway.post("/v1/query", { sql: "insert into notes (body) values ('mine')", transactionId: id }, bearer(TOKENS.writer));
    expect(own.status).toBe(200);
    expect((await gateway.post(`/v1/transactions/${id}/commit`, undefined, bearer(TOKENS.writer))).body.outcome).toBe("committed");
    const { rows } = await db.admin.query("select body from notes where body in ('x', 'mine')");
    expect(rows).toEqual([{ body: "mine" }]);
  });

  it("throttles a principal past its requests in flight, without touching the others", async () => {
    const slow = [1, 2].map(() => gateway.post("/v1/query", { sql: "select pg_sleep(1.5) /* narrow-slow */" }, bearer(TOKENS.narrow)));
    await waitFor(async () => (await gatewaySessions(db)).filter((session) => session.state === "active" && session.query.includes("narrow-slow")).length === 2, 10000, "both slow requests to run");
    const third = await gateway.post("/v1/query", { sql: "select 1" }, bearer(TOKENS.narrow));
    expect(third.status).toBe(429);
    expect(third.body.error).toMatchObject({ code: "THROTTLED", retryable: true });
    expect(third.headers.get("retry-after")).toBe("1");
    expect((await gateway.post("/v1/query", { sql: "select 1" }, bearer(TOKENS.writer))).status).toBe(200);
    expect((await Promise.all(slow)).map((result) => result.status)).toEqual([200, 200]);
    expect((await gateway.post("/v1/query", { sql: "select 1" }, bearer(TOKENS.narrow))).status).toBe(200);
  });

  it("applies the same rules on the Data API surface, answered as the AWS SDK reads them", async () => {
    const command = new ExecuteStatementCommand({ resourceArn: RESOURCE, secretArn: SECRET, sql: "select 1 as one" });
    await expect(dataApiClient(gateway.baseUrl).send(command)).rejects.toMatchObject({ name: "AccessDeniedException", $metadata: { httpStatusCode: 403 } });
    await expect(dataApiClient(gateway.baseUrl, { auth: bearerAuth(TOKENS.stranger) }).send(command)).rejects.toMatchObject({ name: "AccessDeniedException" });
    const answer = await dataApiClient(gateway.baseUrl, { auth: bearerAuth(TOKENS.writer) }).send(command);
    expect(answer.records).toEqual([[{ longValue: 1 }]]);
  });

  it("reads rotated tokens from the file: a new token works, a removed one stops working", async () => {
    const rotated = "writer-token-rotated-0123456789abcdef";
    tokens.write({ writer: rotated, reader: TOKENS.reader, operator: TOKENS.operator });
    await gateway.gateway.authenticator.refresh();
    expect((await gateway.post("/v1/query", { sql: "select 1" }, bearer(rotated))).status).toBe(200);
    expect((await gateway.post("/v1/query", { sql: "select 1" }, bearer(TOKENS.writer))).status).toBe(401);
  });
});

describe("listening without authentication", () => {
  it("is refused anywhere but loopback", () => {
    expect(() => parseConfig({ server: { host: "0.0.0.0" } })).toThrow(ConfigError);
    expect(() => parseConfig({ server: { host: "0.0.0.0" } })).toThrow(/not a loopback address/);
    expect(() => parseConfig({ server: { host: "10.0.0.5" } })).toThrow(/auth\.iam or auth\.bearer/);
    for (const host of ["127.0.0.1", "localhost", "::1", "127.0.0.53"]) expect(() => parseConfig({ server: { host } })).not.toThrow();
    expect(() => parseConfig({ server: { host: "0.0.0.0" }, auth: { bearer: { tokensFile: "/dev/null" } } })).not.toThrow();
  });
});
