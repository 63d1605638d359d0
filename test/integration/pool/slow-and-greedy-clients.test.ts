/**
 * Slow and greedy callers: a request whose headers or body trickle in is cut off at
 * server.requestTimeoutMs, authenticated or not, and a principal's open interactive transactions
 * cannot pin more than its maxTransactionShare of a pool, so the rest keeps serving.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

const TOKEN = "slow-client-token-0123456789abcdef0";
const RECEIVE_MS = 600;

/**
 * Sends `head` and then `trickle` one byte every 200 ms; resolves with what the gateway answered and
 * how many trickled bytes it took before closing the connection.
 */
function trickle(url: string, head: string, trickleText: string): Promise<{ answer: string; sent: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    let answer = "";
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.on("data", (chunk) => (answer += chunk.toString("utf8")));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearInterval(timer);
      resolve({ answer, sent });
    });
    socket.on("connect", () => {
      socket.write(head);
      timer = setInterval(() => {
        if (sent >= trickleText.length) {
          clearInterval(timer);
          reject(new Error("the whole request trickled in without being cut off"));
          socket.destroy();
          return;
        }
        socket.write(trickleText[sent++] as string);
      }, 200);
    });
  });
}

describe("slow and greedy callers", () => {
  let db: TestDatabase;
  let gateway: TestGateway;
  let tokens: TokensFile;

  beforeAll(async () => {
    db = await createTestDatabase();
    tokens = writeTokensFile({ app: TOKEN });
    gateway = await startTestGateway({
      clusters: { default: { writerUrl: db.url } },
      server: { requestTimeoutMs: RECEIVE_MS },
      pool: { maxSize: 4 },
      auth: { bearer: { tokensFile: tokens.path }, principals: { app: { clusters: { default: "read-write" } } } },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await db?.drop();
    tokens?.remove();
  });

  it("cuts off a body trickled a byte at a time, for an authenticated caller", async () => {
    const body = JSON.stringify({ sql: `select '${"x".repeat(60)}'` });
    const head = `POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-poolgate-auth: Bearer ${TOKEN}\r\nContent-Length: ${body.length}\r\n\r\n`;
    const { answer, sent } = await trickle(gateway.baseUrl, head, body);
    expect(sent).toBeLessThan(body.length);
    expect(answer).toMatch(/^HTTP\/1\.1 (400|408)/);
  });

  it("cuts off headers trickled a byte at a time, before anyone is authenticated", async () => {
    const headers = `POST /v1/query HTTP/1.1\r\nHost: x\r\nX-Padding: ${"y".repeat(60)}\r\n\r\n`;
    const { answer, sent } = await trickle(gateway.baseUrl, "", headers);
    expect(sent).toBeLessThan(headers.length);
    expect(answer === "" || /^HTTP\/1\.1 (400|408)/.test(answer)).toBe(true);
  });

  it("keeps serving other requests meanwhile, and ones that arrive in time", async () => {
    expect((await gateway.post("/v1/query", { sql: "select 1 as one" }, bearer(TOKEN))).body.rows).toEqual([{ one: 1 }]);
  });

  it("refuses a principal more open transactions than its share of the pool, and serves its statements still", async () => {
    const as = bearer(TOKEN);
    const open: string[] = [];
    for (let i = 0; i < 2; i++) {
      const begun = await gateway.post("/v1/transactions", {}, as);
      expect(begun.status).toBe(201);
      open.push(begun.body.transactionId as string);
    }
    const third = await gateway.post("/v1/transactions", {}, as);
    expect(third.status).toBe(503);
    expect(third.body.error.code).toBe("TOO_MANY_TRANSACTIONS");
    expect(third.body.error.message).toContain("maxTransactionShare");
    // Half the pool is still free for its (and everyone's) autocommit statements.
    expect((await gateway.post("/v1/query", { sql: "select 2 as two" }, as)).body.rows).toEqual([{ two: 2 }]);
    for (const id of open) await gateway.post(`/v1/transactions/${id}/commit`, undefined, as);
    expect((await gateway.post("/v1/transactions", {}, as)).status).toBe(201);
  });
});
