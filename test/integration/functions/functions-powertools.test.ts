/**
 * Powertools wired the way Lambda runs it, on the notes API against a real gateway on the real local
 * PostgreSQL: the environment Lambda sets (execution environment, task root, trace header, on-demand
 * initialisation) and an X-Ray daemon stand-in — a UDP socket that receives what the X-Ray SDK emits.
 * Checked: the handler segment (`## index.handler`) exists and carries the route annotation that was
 * dropped before, with the cold start and service, and Event Handler's subsegment per route; neither
 * holds the notes the answer carried; the cold-start metric is emitted on the first invocation only. (functions.test.ts checks the logs' injected context and correlation id.)
 */
import dgram from "node:dgram";
import type { APIGatewayProxyEventV2, Context } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";
import { waitFor } from "../../support/wait-for.js";

let db: TestDatabase;
let gw: TestGateway;
let daemon: dgram.Socket;
const segments: Record<string, unknown>[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await db.admin.query("create table notes (id serial primary key, title text not null unique, body text not null default '', updated_at timestamptz not null default now())");
  await db.admin.query("insert into notes (title, body) values ('a private title', 'a private body')");
  gw = await startTestGateway({ clusters: { default: { writerUrl: db.url } } });
  daemon = dgram.createSocket("udp4");
  daemon.on("message", (message) => {
    // "{header}\n{document}": the X-Ray daemon protocol.
    const [, document] = message.toString("utf8").split("\n");
    if (document) segments.push(JSON.parse(document) as Record<string, unknown>);
  });
  await new Promise<void>((resolve) => daemon.bind(0, "127.0.0.1", resolve));
  Object.assign(process.env, {
    POOLGATE_URL: gw.baseUrl,
    AWS_LAMBDA_FUNCTION_NAME: "notes-api",
    AWS_EXECUTION_ENV: "AWS_Lambda_nodejs24.x",
    AWS_LAMBDA_INITIALIZATION_TYPE: "on-demand",
    LAMBDA_TASK_ROOT: "/var/task",
    _HANDLER: "index.handler",
    _X_AMZN_TRACE_ID: "Root=1-6740a1b2-3c4d5e6f7a8b9c0d1e2f3a4b;Parent=53995c3f42cd8ad8;Sampled=1",
    AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemon.address().port}`,
    AWS_XRAY_CONTEXT_MISSING: "IGNORE_ERROR",
    POWERTOOLS_TRACE_ENABLED: "true",
    POWERTOOLS_DEV: "false",
    AWS_REGION: "us-east-1",
  });
});

afterAll(async () => {
  daemon?.close();
  await gw?.stop();
  await db?.drop();
});

function httpEvent(requestId: string): APIGatewayProxyEventV2 {
  return {
    version: "2.0",
    routeKey: "GET /notes",
    rawPath: "/notes",
    rawQueryString: "",
    headers: {},
    isBase64Encoded: false,
    requestContext: {
      accountId: "123456789012",
      apiId: "api",
      domainName: "api.example.com",
      domainPrefix: "api",
      http: { method: "GET", path: "/notes", protocol: "HTTP/1.1", sourceIp: "203.0.113.1", userAgent: "test" },
      requestId,
      routeKey: "GET /notes",
      stage: "$default",
      time: "23/Nov/2026:12:00:00 +0000",
      timeEpoch: Date.now(),
    },
  };
}

const context = (awsRequestId: string) =>
  ({ functionName: "notes-api", functionVersion: "$LATEST", awsRequestId, invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:notes-api", memoryLimitInMB: "256", getRemainingTimeInMillis: () => 5000 }) as unknown as Context;

async function invoke(requestId: string, awsRequestId: string): Promise<Record<string, unknown>[]> {
  const { handler } = await import("../../../functions/notes-api/handler.js");
  const chunks: string[] = [];
  const spies = [process.stdout, process.stderr].map((stream) =>
    vi.spyOn(stream, "write").mockImplementation((chunk: string | Uint8Array) => {
      chunks.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString());
      return true;
    }),
  );
  try {
    const response = await handler(httpEvent(requestId), context(awsRequestId));
    expect(response.statusCode).toBe(200);
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return chunks.join("").split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("Powertools in the notes API", () => {
  it("opens a handler segment that carries the annotations, emits the cold-start metric once, and logs with context and correlation id", async () => {
    const first = await invoke("JmIzLgfqIAMEMhw=", "11111111-2222-3333-4444-555555555555");
    const coldStart = first.filter((line) => "_aws" in line && "ColdStart" in line);
    expect(coldStart).toHaveLength(1);
    expect(coldStart[0]).toMatchObject({ ColdStart: 1, function_name: "notes-api", service: "notes-api" });

    const second = await invoke("KnJzMhgrJBNFNix=", "66666666-7777-8888-9999-000000000000");
    expect(second.filter((line) => "_aws" in line && "ColdStart" in line)).toHaveLength(0);

    // The handler subsegments arrive at the daemon when they close.
    await waitFor(() => segments.filter((segment) => segment.name === "## index.handler").length >= 2, 10000, "two handler subsegments at the X-Ray daemon stand-in");
    const handlerSegments = segments.filter((segment) => segment.name === "## index.handler");
    expect(handlerSegments[0]).toMatchObject({ trace_id: "1-6740a1b2-3c4d5e6f7a8b9c0d1e2f3a4b", annotations: { ColdStart: true, Service: "notes-api", route: "GET /notes" } });
    expect(handlerSegments[1]).toMatchObject({ annotations: { ColdStart: false, route: "GET /notes" } });
    // Event Handler's tracer middleware: a subsegment per route, with the request's method and the answer's status.
    const routeSegments = segments.filter((segment) => segment.name === "GET /notes");
    expect(routeSegments).toHaveLength(2);
    expect(routeSegments[0]).toMatchObject({ http: { request: { method: "GET" }, response: { status: 200 } } });
    // The response (the caller's notes) is not copied into the trace, by either.
    for (const segment of handlerSegments) expect(JSON.stringify(segment.metadata ?? {})).not.toContain("response");
    for (const segment of segments) expect(JSON.stringify(segment)).not.toContain("a private");
  });
});
