/**
 * The example Lambda handlers, invoked locally with real event shapes (@types/aws-lambda) against a
 * running gateway on the real local PostgreSQL: the notes API's CRUD, and the canary's write-and-read
 * check. Powertools' output is captured from stdout and stderr and asserted: structured JSON log lines
 * and CloudWatch EMF metric documents.
 */
import type { APIGatewayProxyEventV2, Context, ScheduledEvent } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { type CapturedLogs, captureLogs } from "../../support/log-capture.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

let db: TestDatabase;
let gw: TestGateway;
/** What the gateway logs: one line per answered request (`log.requests`). */
let gatewayLogs: CapturedLogs;

function lambdaContext(functionName: string, remainingMs = 3000): Context {
  const deadline = Date.now() + remainingMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: "256",
    awsRequestId: `req-${Math.random().toString(16).slice(2)}`,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: "2026/11/23/[$LATEST]abc",
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function httpEvent(method: string, path: string, routeKey: string, body?: unknown, id?: number, requestId = "r1"): APIGatewayProxyEventV2 {
  return {
    version: "2.0",
    routeKey,
    rawPath: path,
    rawQueryString: "",
    headers: { "content-type": "application/json" },
    ...(id === undefined ? {} : { pathParameters: { id: String(id) } }),
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    isBase64Encoded: false,
    requestContext: {
      accountId: "123456789012",
      apiId: "api",
      domainName: "api.example.com",
      domainPrefix: "api",
      http: { method, path, protocol: "HTTP/1.1", sourceIp: "203.0.113.1", userAgent: "test" },
      requestId,
      routeKey,
      stage: "$default",
      time: "23/Nov/2026:12:00:00 +0000",
      timeEpoch: Date.now(),
    },
  };
}

/** Runs `work` and returns what it printed (stdout and stderr: Powertools logs errors to stderr), as parsed JSON lines. */
async function captured<T>(work: () => Promise<T>): Promise<{ value: T; lines: Record<string, unknown>[] }> {
  const chunks: string[] = [];
  const record = (chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString());
    return true;
  };
  const spies = [vi.spyOn(process.stdout, "write").mockImplementation(record), vi.spyOn(process.stderr, "write").mockImplementation(record)];
  try {
    const value = await work();
    return { value, lines: chunks.join("").split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as Record<string, unknown>) };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}

const emf = (lines: Record<string, unknown>[]) => lines.filter((line) => "_aws" in line);

beforeAll(async () => {
  db = await createTestDatabase();
  gatewayLogs = captureLogs("info");
  gw = await startTestGateway({ clusters: { default: { writerUrl: db.url } }, log: { requests: true } }, { logger: gatewayLogs.logger });
  await db.admin.query("create table notes (id serial primary key, title text not null unique, body text not null default '', updated_at timestamptz not null default now())");
  await db.admin.query("create table poolgate_canary (id int primary key, marker text not null, written_at timestamptz not null)");
  process.env.POOLGATE_URL = gw.baseUrl;
  process.env.POWERTOOLS_TRACE_ENABLED = "false";
  process.env.POWERTOOLS_DEV = "false";
  process.env.AWS_LAMBDA_FUNCTION_NAME = "test-function";
});

afterAll(async () => {
  await gw?.stop();
  await db?.drop();
});

describe("the notes API handler", () => {
  it("creates, reads, updates, lists and deletes notes, with structured logs and EMF metrics", async () => {
    const { handler } = await import("../../../functions/notes-api/handler.js");
    const call = (event: APIGatewayProxyEventV2) => captured(() => handler(event, lambdaContext("notes-api")));

    const created = await call(httpEvent("POST", "/notes", "POST /notes", { title: "first", body: "hello" }));
    expect(created.value.statusCode).toBe(201);
    const note = JSON.parse(created.value.body ?? "{}") as { id: number; title: string };
    expect(note).toMatchObject({ title: "first", body: "hello" });
    const metricDocs = emf(created.lines);
    expect(metricDocs).toHaveLength(1);
    expect(metricDocs[0]).toMatchObject({ NoteCreated: 1, service: "notes-api", _aws: { CloudWatchMetrics: [{ Namespace: "Poolgate", Metrics: [{ Name: "NoteCreated", Unit: "Count" }] }] } });

    const read = await call(httpEvent("GET", `/notes/${note.id}`, "GET /notes/{id}", undefined, note.id));
    expect(JSON.parse(read.value.body ?? "{}")).toMatchObject({ id: note.id, title: "first" });
    const updated = await call(httpEvent("PUT", `/notes/${note.id}`, "PUT /notes/{id}", { title: "renamed", body: "" }, note.id));
    expect(JSON.parse(updated.value.body ?? "{}")).toMatchObject({ title: "renamed" });
    const listed = await call(httpEvent("GET", "/notes", "GET /notes"));
    expect((JSON.parse(listed.value.body ?? "{}") as { notes: unknown[] }).notes).toHaveLength(1);

    const duplicate = await call(httpEvent("POST", "/notes", "POST /notes", { title: "renamed" }));
    expect(duplicate.value.statusCode).toBe(409);
    const invalid = await call(httpEvent("POST", "/notes", "POST /notes", { nope: 1 }));
    expect(invalid.value.statusCode).toBe(400);
    const notJson = await call(httpEvent("POST", "/notes", "POST /notes", "{"));
    expect(notJson.value.statusCode).toBe(400);

    const deleted = await call(httpEvent("DELETE", `/notes/${note.id}`, "DELETE /notes/{id}", undefined, note.id));
    expect((deleted.value).statusCode).toBe(204);
    const gone = await call(httpEvent("GET", `/notes/${note.id}`, "GET /notes/{id}", undefined, note.id));
    expect(gone.value.statusCode).toBe(404);
  });

  it("creates one note for a POST retried with the same Idempotency-Key, and refuses the key for another note", async () => {
    const { handler } = await import("../../../functions/notes-api/handler.js");
    const post = (body: unknown, key: string) => {
      const event = httpEvent("POST", "/notes", "POST /notes", body);
      event.headers = { ...event.headers, "idempotency-key": key };
      return captured(() => handler(event, lambdaContext("notes-api")));
    };

    const first = await post({ title: "exactly once" }, "7c9e6679-7425-40de-944b-e07fc1f90ae7");
    const retried = await post({ title: "exactly once" }, "7c9e6679-7425-40de-944b-e07fc1f90ae7");
    expect(first.value.statusCode).toBe(201);
    // The retry is answered with the first call's note, not a 409 for the unique title.
    expect(retried.value.statusCode).toBe(201);
    expect(JSON.parse(retried.value.body ?? "{}")).toEqual(JSON.parse(first.value.body ?? "{}"));
    const { rows } = await db.admin.query<{ n: string }>("select count(*) as n from notes where title = 'exactly once'");
    expect(rows[0]?.n).toBe("1");

    const reused = await post({ title: "another note" }, "7c9e6679-7425-40de-944b-e07fc1f90ae7");
    expect(reused.value.statusCode).toBe(422);
    const invalid = await post({ title: "spaced key" }, "not a valid key");
    expect(invalid.value.statusCode).toBe(400);
    await db.admin.query("delete from notes where title = 'exactly once'");
  });

  it("sends the invocation's correlation id to the gateway, which logs it beside each request's own id", async () => {
    const { handler } = await import("../../../functions/notes-api/handler.js");
    const requestId = "JmIzLgfqIAMEMhw=";
    const created = await captured(() => handler(httpEvent("POST", "/notes", "POST /notes", { title: "correlated" }, undefined, requestId), lambdaContext("notes-api")));
    expect(created.value.statusCode).toBe(201);
    const id = (JSON.parse(created.value.body ?? "{}") as { id: number }).id;
    const read = await captured(() => handler(httpEvent("GET", `/notes/${id}`, "GET /notes/{id}", undefined, id, requestId), lambdaContext("notes-api")));
    expect(read.value.statusCode).toBe(200);

    const lines = gatewayLogs.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === "request" && line.correlationId === requestId);
    expect(lines.map((line) => `${String(line.route)} ${String(line.status)}`)).toEqual(["/v1/query 200", "/v1/query 200"]);
    // Each gateway request keeps an id of its own; the correlation id ties them to the API request.
    expect(new Set(lines.map((line) => line.requestId)).size).toBe(2);
    expect(lines.map((line) => line.requestId)).not.toContain(requestId);
    await db.admin.query("delete from notes where title = 'correlated'");
  });

  it("answers what no route serves, an id that is no id, and a base64-encoded body as HTTP APIs send them", async () => {
    const { handler } = await import("../../../functions/notes-api/handler.js");
    const call = (event: APIGatewayProxyEventV2) => captured(() => handler(event, lambdaContext("notes-api")));

    // Event Handler answers a path or a method no route serves with 404 (the HTTP API routes only the stack's routes).
    expect((await call(httpEvent("GET", "/elsewhere", "$default"))).value.statusCode).toBe(404);
    expect((await call(httpEvent("PATCH", "/notes", "$default"))).value.statusCode).toBe(404);
    const badId = await call(httpEvent("GET", "/notes/abc", "GET /notes/{id}"));
    expect(badId.value.statusCode).toBe(400);
    expect(JSON.parse(badId.value.body ?? "{}")).toEqual({ message: "invalid request", issues: ["id: a positive integer"] });
    const tooLong = await call(httpEvent("POST", "/notes", "POST /notes", { title: "" }));
    expect(JSON.parse(tooLong.value.body ?? "{}")).toMatchObject({ message: "invalid request", issues: [expect.stringMatching(/^title: /)] });

    const encoded = httpEvent("POST", "/notes", "POST /notes", Buffer.from(JSON.stringify({ title: "encoded", body: "é" })).toString("base64"));
    encoded.isBase64Encoded = true;
    const created = await call(encoded);
    expect(created.value.statusCode).toBe(201);
    expect(JSON.parse(created.value.body ?? "{}")).toMatchObject({ title: "encoded", body: "é" });
    await db.admin.query("delete from notes where title = 'encoded'");
  });

  it("logs a failure as one structured line with the request's context", async () => {
    const { handler } = await import("../../../functions/notes-api/handler.js");
    await db.admin.query("alter table notes rename to notes_moved");
    try {
      const failed = await captured(() => handler(httpEvent("GET", "/notes", "GET /notes"), lambdaContext("notes-api")));
      expect(failed.value.statusCode).toBe(500);
      const errors = failed.lines.filter((line) => line.level === "ERROR");
      expect(errors).toHaveLength(1);
      // Injected by the middleware: the invocation's context, and the HTTP API's request id as correlation id.
      expect(errors[0]).toMatchObject({ message: "request failed", service: "notes-api", function_name: "notes-api", route: "GET /notes", code: "DATABASE_ERROR", correlation_id: "r1" });
      expect(errors[0]?.function_request_id).toBeTruthy();
      expect(JSON.stringify(errors[0])).toContain("does not exist");
    } finally {
      await db.admin.query("alter table notes_moved rename to notes");
    }
  });
});

describe("the canary", () => {
  const scheduled: ScheduledEvent = {
    version: "0",
    id: "5f0c6d1e-1111-2222-3333-444455556666",
    "detail-type": "Scheduled Event",
    source: "aws.events",
    account: "123456789012",
    time: "2026-11-23T12:00:00Z",
    region: "us-east-1",
    resources: ["arn:aws:events:us-east-1:123456789012:rule/poolgate-canary"],
    detail: {},
  };

  it("writes, reads back, and reports success and latency as EMF metrics", async () => {
    const { handler } = await import("../../../functions/canary/handler.js");
    const run = await captured(() => handler(scheduled, lambdaContext("poolgate-canary")));
    expect(run.value.ok).toBe(true);
    const [document] = emf(run.lines);
    expect(document).toMatchObject({ CanarySuccess: 1, service: "poolgate-canary" });
    const names = ((document?._aws as { CloudWatchMetrics: { Metrics: { Name: string; Unit: string }[] }[] }).CloudWatchMetrics[0]?.Metrics ?? []).map((metric) => `${metric.Name}:${metric.Unit}`);
    expect(names).toEqual(expect.arrayContaining(["CanarySuccess:Count", "CanaryWriteLatency:Milliseconds", "CanaryReadLatency:Milliseconds", "CanaryLatency:Milliseconds"]));
    expect(run.lines.find((line) => line.message === "canary passed")).toMatchObject({ level: "INFO", service: "poolgate-canary" });
    const { rows } = await db.admin.query("select marker from poolgate_canary");
    expect(rows).toHaveLength(1);
  });

  it("reports failure (CanarySuccess 0) and fails the invocation when the database refuses the write", async () => {
    const { handler } = await import("../../../functions/canary/handler.js");
    await db.admin.query("alter table poolgate_canary rename to poolgate_canary_moved");
    try {
      const run = await captured(() => handler(scheduled, lambdaContext("poolgate-canary")).then(() => "passed", (err: Error) => err.message));
      expect(run.value).toMatch(/^canary failed: /);
      expect(emf(run.lines)[0]).toMatchObject({ CanarySuccess: 0 });
      expect(run.lines.find((line) => line.level === "ERROR")).toMatchObject({ message: "canary failed", code: "DATABASE_ERROR" });
    } finally {
      await db.admin.query("alter table poolgate_canary_moved rename to poolgate_canary");
    }
  });
});
