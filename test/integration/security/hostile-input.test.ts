/**
 * The inputs the HTTP fuzzing found answered badly, each pinned down on the real local PostgreSQL:
 * bodies nested deep enough to exhaust a recursive parser, COPY FROM STDIN (which used to leave its
 * session hanging), an over-long path parameter, a malformed URL, headers over Node's limit, and
 * operator answers without a request id; and bodies that arrive in pieces (chunked, a character split
 * between two pieces, past the limit part way, abandoned part way), which the gateway's own body
 * reader (gateway/http/body-reader.ts) must take as Fastify's did.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";
import { waitFor } from "../../support/wait-for.js";

/**
 * One exchange on a raw socket: `send` writes the request (in pieces, as it likes); resolves with what
 * the gateway answered once the connection closes (either side; `hangUp` closes ours) or `done` says
 * the answer is complete. Writes
 * the gateway no longer reads (it answered and closed) are the point of some tests, so their errors
 * are not failures.
 */
function rawExchange(baseUrl: string, send: (write: (data: string | Buffer) => void, hangUp: () => void) => Promise<void>, done = (text: string) => /\r\n\r\n[\s\S]*\}$/.test(text)): Promise<string> {
  const url = new URL(baseUrl);
  return new Promise<string>((resolve, reject) => {
    let text = "";
    const socket = net.connect(Number(url.port), url.hostname, () => {
      const write = (data: string | Buffer) => {
        if (!socket.destroyed) socket.write(data, () => undefined);
      };
      send(write, () => socket.destroy()).catch(reject);
    });
    socket.on("data", (chunk) => {
      text += chunk.toString();
      if (done(text)) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on("close", () => resolve(text));
    socket.on("error", () => resolve(text));
  });
}

/** One chunk of a chunked body. */
const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

/**
 * A slow client's pace between its writes: what the test sends, not a wait for the gateway (so that
 * the pieces arrive in separate reads, as from a caller on a slow link).
 */
const paceWrites = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("hostile input", () => {
  let db: TestDatabase;
  let gateway: TestGateway;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.admin.query("create table copied (note text)");
    gateway = await startTestGateway({ clusters: { default: { writerUrl: db.url } }, pool: { maxSize: 2, acquireTimeoutMs: 1000 } });
  });

  afterAll(async () => {
    await gateway?.stop();
    await db?.drop();
  });

  it("refuses bodies nested deeper than 64 levels on both surfaces, before parsing them", async () => {
    const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
    const native = await gateway.post("/v1/query", `{"sql":"select $1::text","params":[${deep}]}`);
    expect(native.status).toBe(400);
    expect(native.body.error.message).toContain("nested deeper than 64 levels");
    const arrayValue = `${'{"arrayValues":['.repeat(1000)}${"]}".repeat(1000)}`;
    const dataApi = await gateway.post("/Execute", `{"resourceArn":"a","secretArn":"b","sql":"select :a","parameters":[{"name":"a","value":{"arrayValue":${arrayValue}}}]}`);
    expect(dataApi.status).toBe(400);
    expect(dataApi.headers.get("x-amzn-errortype")).toBe("BadRequestException");
  });

  it("refuses COPY FROM STDIN and keeps the session usable, on either protocol", async () => {
    for (let i = 0; i < 4; i++) {
      const answer = await gateway.post("/v1/query", { sql: "copy copied (note) from stdin" });
      expect(answer.status).toBe(400);
      expect(answer.body.error.database.message).toContain("not supported through the gateway");
    }
    expect((await gateway.post("/v1/query", { sql: "select 1 as one" })).body.rows).toEqual([{ one: 1 }]);
    const cluster = gateway.gateway.clusters.get("default");
    // A session goes back to its pool once its locks are released, just after the answer is sent.
    await waitFor(() => cluster?.poolOf(cluster.writer).stats().active === 0, 10000, "the writer's sessions back in the pool");
  });

  it("answers Fastify's own refusals in the gateway's format, and takes long transaction ids", async () => {
    const longId = `${"x".repeat(300)}`;
    const commit = await gateway.post(`/v1/transactions/${longId}/commit`, undefined);
    expect(commit.status).toBe(404);
    expect(commit.body.error.code).toBe("TRANSACTION_NOT_FOUND");
    const badUrl = await gateway.get("/v1/%");
    expect(badUrl.status).toBe(400);
    expect(badUrl.body.error.code).toBe("INVALID_REQUEST");
    expect(badUrl.headers.get("x-request-id")).toBe(badUrl.body.error.requestId);
  });

  it("answers headers over the limit with HEADERS_TOO_LARGE, readable by both clients", async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const url = new URL(gateway.baseUrl);
      const socket = net.connect(Number(url.port), url.hostname, () => {
        socket.write(`POST /v1/query HTTP/1.1\r\nHost: x\r\nx-poolgate-auth: Bearer ${"A".repeat(20000)}\r\n\r\n`);
      });
      let text = "";
      socket.on("data", (chunk) => (text += chunk.toString()));
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
    });
    expect(answer).toMatch(/^HTTP\/1.1 431 /);
    expect(answer).toContain("x-amzn-ErrorType: BadRequestException");
    expect(answer).toContain('"code":"HEADERS_TOO_LARGE"');
  });

  it("names every answer with a request id, operator and public routes included", async () => {
    for (const path of ["/readyz", "/healthz", "/openapi.json", "/v1/admin/topology"]) {
      const answer = await gateway.get(path, { "x-request-id": "probe-1" });
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get("x-request-id"), path).toBe("probe-1");
    }
  });

  it("gives ids of its own that tell a caller nothing of other callers' traffic", async () => {
    // A counter in the id would let any caller read the gateway's request rate off two answers.
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await gateway.get("/readyz")).headers.get("x-request-id") ?? "");
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Random through and through: even their first eight digits differ (a fixed prefix would repeat).
    expect(new Set(ids.map((id) => id.slice(0, 8))).size).toBe(ids.length);
  });

  it("reads a chunked body sent in pieces, a character split between two of them", async () => {
    const body = Buffer.from(JSON.stringify({ sql: "select $1::text as t", params: ["é€ ok"] }));
    // The two bytes of "é" go out in different chunks, a few milliseconds apart.
    const split = body.indexOf(Buffer.from("é")) + 1;
    const answer = await rawExchange(gateway.baseUrl, async (write) => {
      write("POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
      for (const piece of [body.subarray(0, split), body.subarray(split)]) {
        write(`${piece.length.toString(16)}\r\n`);
        write(Buffer.concat([piece, Buffer.from("\r\n")]));
        await paceWrites(20);
      }
      write("0\r\n\r\n");
    });
    expect(answer).toMatch(/^HTTP\/1.1 200 /);
    expect(answer).toContain('"rows":[{"t":"é€ ok"}]');
  });

  it("refuses a body that grows past the limit while it streams, and the next caller is served", async () => {
    // No Content-Length to refuse it by: 1.25 MiB in chunks, against server.maxRequestBytes' 1 MiB.
    const piece = `${"x".repeat(64 * 1024)}`;
    const answer = await rawExchange(gateway.baseUrl, async (write) => {
      write('POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
      write(chunk(`{"sql":"select '`));
      for (let i = 0; i < 20; i++) {
        write(chunk(piece));
        await paceWrites(2);
      }
      write(`${chunk(`'"}`)}0\r\n\r\n`);
    });
    expect(answer).toMatch(/^HTTP\/1.1 413 /);
    expect(answer).toContain('"code":"REQUEST_TOO_LARGE"');
    expect(answer.toLowerCase()).toContain("connection: close");
    expect((await gateway.post("/v1/query", { sql: "select 1 as one" })).body.rows).toEqual([{ one: 1 }]);
  });

  it("lets a caller hang up half-way through its body, and leaves nothing behind", async () => {
    for (const framing of ["Content-Length: 1000", "Transfer-Encoding: chunked"]) {
      const answer = await rawExchange(gateway.baseUrl, async (write, hangUp) => {
        write(`POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`);
        write(framing.startsWith("Content-Length") ? '{"sql":"select 1' : '20\r\n{"sql":"select 1');
        await paceWrites(20);
        hangUp();
      });
      expect(answer, framing).toBe("");
    }
    expect((await gateway.post("/v1/query", { sql: "select 2 as two" })).body.rows).toEqual([{ two: 2 }]);
    const cluster = gateway.gateway.clusters.get("default");
    // A session goes back to its pool once its locks are released, just after the answer is sent.
    await waitFor(() => cluster?.poolOf(cluster.writer).stats().active === 0, 10000, "the writer's sessions back in the pool");
  });

  it("keeps each surface's own body limit: 1.5 MiB is too much for /v1/query, not for the Data API's 4 MiB", async () => {
    const big = "y".repeat(1536 * 1024);
    const native = await gateway.post("/v1/query", { sql: "select length($1) as n", params: [big] });
    expect(native.status).toBe(413);
    expect(native.body.error.code).toBe("REQUEST_TOO_LARGE");
    const dataApi = await gateway.post("/Execute", {
      resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:default",
      secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:x",
      sql: "select length(:big) as n",
      parameters: [{ name: "big", value: { stringValue: big } }],
    });
    expect(dataApi.status, JSON.stringify(dataApi.body)).toBe(200);
    expect(dataApi.body.records).toEqual([[{ longValue: 1536 * 1024 }]]);
  });
});
