/**
 * Nothing secret reaches the log: the gateway runs at trace level against the real local PostgreSQL
 * (and an unreachable cluster, whose connect failures are logged) while callers send valid and
 * invalid tokens, statements with parameters that succeed and fail, on both surfaces; every log line
 * is captured and searched for the tokens, the database password and the parameter values. Error
 * bodies are searched for the database's addresses and credentials too.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { captureLogs } from "../../support/log-capture.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";
import { unusedPort } from "../../support/ports.js";

const SECRETS = {
  token: "good-token-SENTINEL-7f3a9c0e5b1d2468ace",
  wrongToken: "wrong-token-SENTINEL-0e5b1d2468ace7f3a9",
  password: "db-password-SENTINEL-5b1d2468",
  param: "param-value-SENTINEL-2468ace",
  failingParam: "failing-param-SENTINEL-9c0e",
  dataApiParam: "data-api-param-SENTINEL-d246",
};

describe("log and error-body hygiene", () => {
  let db: TestDatabase;
  let gateway: TestGateway;
  let tokens: TokensFile;
  const { logger, lines } = captureLogs("trace");
  const bodies: string[] = [];
  let deadPort = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.admin.query("create table items (id serial primary key, name text unique)");
    tokens = writeTokensFile({ app: SECRETS.token });
    const url = new URL(db.url);
    url.password = SECRETS.password;
    deadPort = await unusedPort();
    gateway = await startTestGateway(
      {
        clusters: {
          default: { writerUrl: url.toString() },
          // Nothing listens there: its pool logs connect failures (with the password in its URL).
          dead: { writerUrl: `postgres://app:${SECRETS.password}@127.0.0.1:${deadPort}/app` },
        },
        pool: { acquireTimeoutMs: 300 },
        topology: { failoverWaitMs: 300 },
        log: { level: "trace" },
        auth: { bearer: { tokensFile: tokens.path }, principals: { app: { clusters: { "*": "read-write" }, admin: true } } },
      },
      { logger },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await db?.drop();
    tokens?.remove();
  });

  it("logs refusals, failures and connects without a token, a password or a parameter value", async () => {
    const auth = { "x-poolgate-auth": `Bearer ${SECRETS.token}` };
    const send = async (path: string, body: unknown, headers: Record<string, string>) => {
      const answer = await gateway.post(path, body, headers);
      bodies.push(JSON.stringify(answer.body));
      return answer;
    };
    expect((await send("/v1/query", { sql: "select $1::text as v", params: [SECRETS.param] }, auth)).status).toBe(200);
    expect((await send("/v1/query", { sql: "insert into items (name) values ($1)", params: [SECRETS.param] }, auth)).status).toBe(200);
    // A constraint violation: PostgreSQL puts the value in its detail, which the caller may see, the log may not.
    const duplicate = await send("/v1/query", { sql: "insert into items (name) values ($1)", params: [SECRETS.param] }, auth);
    expect(duplicate.body.error.code).toBe("DATABASE_ERROR");
    expect((await send("/v1/query", { sql: "select $1::int", params: [SECRETS.failingParam] }, auth)).status).toBe(400);
    expect((await send("/v1/query", { sql: "select 1" }, { "x-poolgate-auth": `Bearer ${SECRETS.wrongToken}` })).status).toBe(401);
    expect((await send("/v1/query", { sql: "select 1" }, { authorization: `Bearer ${SECRETS.wrongToken}` })).status).toBe(401);
    const unavailable = await send("/v1/query", { sql: "select $1::text", params: [SECRETS.param], cluster: "dead" }, auth);
    expect(unavailable.status).toBe(503);
    expect(["DATABASE_UNAVAILABLE", "PRIMARY_UNAVAILABLE"]).toContain(unavailable.body.error.code);
    const dataApi = await send(
      "/Execute",
      {
        resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:x",
        secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:x",
        sql: "select :v::int",
        parameters: [{ name: "v", value: { stringValue: SECRETS.dataApiParam } }],
      },
      auth,
    );
    expect(dataApi.status).toBe(400);

    expect(lines.length).toBeGreaterThan(10);
    const log = lines.join("\n");
    // The log did record what happened...
    expect(log).toContain("access refused");
    expect(log).toContain("connect failed");
    // ...and nothing secret.
    for (const [name, value] of Object.entries(SECRETS)) expect(log.includes(value), `${name} in the log`).toBe(false);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
  });

  it("tells callers no database address, port or credential in an error body", () => {
    const all = bodies.join("\n");
    expect(all).not.toContain(SECRETS.password);
    expect(all).not.toContain(String(deadPort));
    expect(all).not.toContain("ECONNREFUSED 127.0.0.1");
  });
});
