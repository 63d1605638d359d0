/**
 * The notes API authenticated by a bearer token from Secrets Manager (POOLGATE_TOKEN_SECRET), read
 * through Powertools' Parameters utility, against a real gateway (bearer auth) on the real local
 * PostgreSQL. Secrets Manager is the stand-in (test/support/secrets-manager-standin.ts): no AWS here.
 */
import type { APIGatewayProxyEventV2, Context } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";
import { type SecretsManagerStandIn, startSecretsManagerStandIn } from "../../support/secrets-manager-standin.js";

const SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:notes-api-token-AbCdEf";
const TOKEN = "notes-api-token-0123456789abcdef0123456789";

let db: TestDatabase;
let gw: TestGateway;
let tokens: TokensFile;
let secrets: SecretsManagerStandIn;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.admin.query("create table notes (id serial primary key, title text not null unique, body text not null default '', updated_at timestamptz not null default now())");
  tokens = writeTokensFile({ "notes-api": TOKEN });
  gw = await startTestGateway({
    clusters: { default: { writerUrl: db.url } },
    auth: { bearer: { tokensFile: tokens.path }, principals: { "notes-api": { clusters: { default: "read-write" } } } },
  });
  secrets = await startSecretsManagerStandIn();
  secrets.setStage(SECRET, "AWSCURRENT", TOKEN);
  Object.assign(process.env, {
    POOLGATE_URL: gw.baseUrl,
    POOLGATE_TOKEN_SECRET: SECRET,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
    AWS_SECRET_ACCESS_KEY: "example-secret",
    AWS_LAMBDA_FUNCTION_NAME: "notes-api",
    POWERTOOLS_TRACE_ENABLED: "false",
    POWERTOOLS_DEV: "false",
  });
});

afterAll(async () => {
  await gw?.stop();
  await secrets?.close();
  await db?.drop();
  tokens?.remove();
});

function httpEvent(method: "GET" | "POST", body?: unknown): APIGatewayProxyEventV2 {
  return {
    version: "2.0",
    routeKey: `${method} /notes`,
    rawPath: "/notes",
    rawQueryString: "",
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    isBase64Encoded: false,
    requestContext: {
      accountId: "123456789012",
      apiId: "api",
      domainName: "api.example.com",
      domainPrefix: "api",
      http: { method, path: "/notes", protocol: "HTTP/1.1", sourceIp: "203.0.113.1", userAgent: "test" },
      requestId: "token-test",
      routeKey: `${method} /notes`,
      stage: "$default",
      time: "23/Nov/2026:12:00:00 +0000",
      timeEpoch: Date.now(),
    },
  };
}

const context = { functionName: "notes-api", awsRequestId: "req-token", getRemainingTimeInMillis: () => 5000 } as unknown as Context;

/** Invokes the handler with Powertools' output kept off the test's console; resolves the answer and the error lines. */
async function invoke(event: APIGatewayProxyEventV2): Promise<{ statusCode: number | undefined; body: string | undefined; errors: Record<string, unknown>[] }> {
  const { handler } = await import("../../../functions/notes-api/handler.js");
  const chunks: string[] = [];
  const spies = [process.stdout, process.stderr].map((stream) =>
    vi.spyOn(stream, "write").mockImplementation((chunk: string | Uint8Array) => {
      chunks.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString());
      return true;
    }),
  );
  try {
    const answer = await handler(event, context);
    const lines = chunks.join("").split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as Record<string, unknown>);
    return { statusCode: answer.statusCode, body: answer.body, errors: lines.filter((line) => line.level === "ERROR") };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}

describe("the notes API with a bearer token from Secrets Manager", () => {
  it("authenticates with the secret's token, asking Secrets Manager once for calls within the cache's age", async () => {
    const created = await invoke(httpEvent("POST", { title: "by token" }));
    expect(created.statusCode).toBe(201);
    const listed = await invoke(httpEvent("GET"));
    expect(listed.statusCode).toBe(200);
    expect((JSON.parse(listed.body ?? "{}") as { notes: { title: string }[] }).notes.map((note) => note.title)).toEqual(["by token"]);
    // POOLGATE_TOKEN_MAX_AGE_S defaults to 300 s: both invocations used the first answer.
    expect(secrets.calls()).toBe(1);
  });

  it("refuses at load an environment that names both an IAM audience and a token secret", async () => {
    vi.resetModules();
    process.env.POOLGATE_AUDIENCE = "poolgate";
    try {
      await expect(import("../../../functions/notes-api/handler.js")).rejects.toThrow(/set POOLGATE_AUDIENCE \(IAM\) or POOLGATE_TOKEN_SECRET \(a bearer token\), not both/);
    } finally {
      delete process.env.POOLGATE_AUDIENCE;
    }
  });
});
