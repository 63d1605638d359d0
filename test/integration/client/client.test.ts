/**
 * The client SDK against a real gateway over real HTTP and the real local PostgreSQL: typed results,
 * transactions, retries only where the gateway allows them (attempts counted through the signing
 * hook), deadlines that cancel on the server, the consistency token carried from write to read, and
 * fresh connections after a pause (a Lambda thawed after a freeze).
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, DatabaseError, DeadlineExceededError, type OutgoingRequest, PoolgateError, StatementTimeoutError, TransportError } from "../../../client/index.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { unusedPort } from "../../support/ports.js";
import { createTestDatabase, gatewaySessions, type TestDatabase } from "../../support/postgres.js";
import { waitFor } from "../../support/wait-for.js";
import { startForwarder } from "../../support/tcp-forwarder.js";

let db: TestDatabase;
let gw: TestGateway;

/** A signing hook that records every request the client sends (one call per attempt). */
function recorder(): { sent: OutgoingRequest[]; sign: (request: OutgoingRequest) => Record<string, string> } {
  const sent: OutgoingRequest[] = [];
  return { sent, sign: (request) => (sent.push(request), { "x-signed": "yes" }) };
}

beforeAll(async () => {
  db = await createTestDatabase();
  gw = await startTestGateway({ clusters: { default: { writerUrl: db.url } }, pool: { maxSize: 2, acquireTimeoutMs: 200 } });
  await db.admin.query("create table notes (id serial primary key, body text not null unique, big int8, price numeric(10,2), at timestamptz, doc jsonb)");
});

afterAll(async () => {
  await gw?.stop();
  await db?.drop();
});

describe("the client", () => {
  it("round-trips typed rows", async () => {
    const client = createClient({ url: gw.baseUrl });
    try {
      interface Note {
        id: number;
        body: string;
        big: string;
        price: string;
        at: string;
        doc: { tags: string[] };
      }
      const inserted = await client.query<Note>(
        "insert into notes (body, big, price, at, doc) values ($1, $2, $3, $4, $5) returning *",
        ["first", "9007199254740993", "12.50", "2024-02-03T04:05:06.789Z", { tags: ["a"] }],
      );
      expect(inserted.command).toBe("INSERT");
      const row = inserted.rows[0] as Note;
      expect(row).toEqual({ id: 1, body: "first", big: "9007199254740993", price: "12.50", at: "2024-02-03T04:05:06.789Z", doc: { tags: ["a"] } });
      const asNumbers = await client.query<{ big: number }>("select big from notes where id = $1", [1], { bigNumbers: "number" });
      expect(asNumbers.rows).toEqual([{ big: 9007199254740992 }]);
      expect(asNumbers.columns).toEqual([{ name: "big", type: "int8" }]);
    } finally {
      await client.close();
    }
  });

  it("commits a transaction when the work resolves and rolls it back when it throws", async () => {
    const client = createClient({ url: gw.baseUrl });
    try {
      const id = await client.transaction(async (tx) => {
        const result = await tx.query<{ id: number }>("insert into notes (body) values ($1) returning id", ["tx-kept"]);
        return result.rows[0]?.id;
      });
      expect(id).toBeGreaterThan(0);
      await expect(
        client.transaction(async (tx) => {
          await tx.query("insert into notes (body) values ($1)", ["tx-dropped"]);
          throw new Error("changed my mind");
        }),
      ).rejects.toThrow("changed my mind");
      const { rows } = await db.admin.query("select body from notes where body like 'tx-%' order by body");
      expect(rows).toEqual([{ body: "tx-kept" }]);
      expect((await gw.get("/healthz")).body.clusters.default.openTransactions).toBe(0);
    } finally {
      await client.close();
    }
  });

  it("runs a batch atomically and carries its consistency token", async () => {
    const client = createClient({ url: gw.baseUrl });
    try {
      const results = await client.batch([
        { sql: "insert into notes (body) values ($1)", params: ["batch-1"] },
        { sql: "select count(*)::int as n from notes where body like 'batch-%'" },
      ]);
      expect(results.map((result) => result.rowCount)).toEqual([1, 1]);
      expect(results[1]?.rows).toEqual([{ n: 1 }]);
      expect(client.consistencyToken).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      const failed = await client.batch([{ sql: "insert into notes (body) values ('batch-2')" }, { sql: "insert into notes (body) values ('batch-1')" }]).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(DatabaseError);
      const { rows } = await db.admin.query("select count(*)::int as n from notes where body = 'batch-2'");
      expect(rows[0].n).toBe(0);
    } finally {
      await client.close();
    }
  });

  it("throws typed errors that keep the SQLSTATE, detail and constraint", async () => {
    const client = createClient({ url: gw.baseUrl });
    try {
      await client.query("insert into notes (body) values ('dup')");
      const err = await client.query("insert into notes (body) values ('dup')").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DatabaseError);
      const database = err as DatabaseError;
      expect(database).toMatchObject({ code: "DATABASE_ERROR", status: 400, retryable: false, sqlstate: "23505", constraint: "notes_body_key" });
      expect(database.detail).toContain("dup");
      expect(database.requestId).toBeTruthy();
    } finally {
      await client.close();
    }
  });

  it("retries only what the gateway marks retryable, with backoff, and counts as one call", async () => {
    const { sent, sign } = recorder();
    const client = createClient({ url: gw.baseUrl, sign, retry: { maxAttempts: 4, baseDelayMs: 10, maxDelayMs: 20 } });
    const holder = createClient({ url: gw.baseUrl });
    try {
      // Both pooled connections busy: POOL_TIMEOUT (retryable) on every attempt.
      const busy = [holder.query("select pg_sleep(1.5)"), holder.query("select pg_sleep(1.5)")];
      await waitFor(async () => (await gatewaySessions(db)).filter((s) => s.query.includes("pg_sleep")).length === 2, 5000, "both connections busy");
      const err = await client.query("select 1").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PoolgateError);
      expect((err as PoolgateError).code).toBe("POOL_TIMEOUT");
      expect(sent).toHaveLength(4);
      expect(sent[0]?.headers["content-type"]).toBe("application/json");
      await Promise.all(busy);

      sent.length = 0;
      // A statement the reader understands (a text it cannot read costs one refused key first: see the idempotency tests).
      const missing = await client.query("select * from no_such_table").catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(DatabaseError);
      expect(sent).toHaveLength(1);
    } finally {
      await client.close();
      await holder.close();
    }
  });

  it("sends again once a request that never left (connection refused), and a write never after a lost answer", async () => {
    const port = await unusedPort();
    const { sent, sign } = recorder();
    const nowhere = createClient({ url: `http://127.0.0.1:${port}`, sign, retry: { maxAttempts: 5, baseDelayMs: 1 } });
    try {
      const err = await nowhere.query("insert into notes (body) values ('x')").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TransportError);
      expect((err as TransportError).notSent).toBe(true);
      expect(sent).toHaveLength(2);
    } finally {
      await nowhere.close();
    }
  });

  it("ends every call within the deadline, and the gateway cancels the statement on the server", async () => {
    let remaining = 600;
    const started = Date.now();
    const client = createClient({ url: gw.baseUrl, deadline: () => remaining - (Date.now() - started) });
    try {
      // A 5 s statement answered STATEMENT_TIMEOUT: the deadline cut it (how soon is the bench's to measure).
      const err = await client.query("select pg_sleep(5) /* deadline-cut */").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StatementTimeoutError);
      await waitFor(async () => !(await gatewaySessions(db)).some((s) => s.state === "active" && s.query.includes("deadline-cut")), 2000, "the statement to be gone");
      remaining = 0;
      const late = await client.query("select 1").catch((e: unknown) => e);
      expect(late).toBeInstanceOf(DeadlineExceededError);
      expect((late as DeadlineExceededError).sent).toBe(false);
    } finally {
      await client.close();
    }
  });

  it("never asks the gateway for a statement timeout above its maximum, however long the deadline", async () => {
    const { sent, sign } = recorder();
    const client = createClient({ url: gw.baseUrl, sign, deadline: () => 900_000 });
    try {
      expect((await client.query("select 1 as one")).rows).toEqual([{ one: 1 }]);
      expect(JSON.parse(sent[0]?.body ?? "{}").timeoutMs).toBe(300_000);
    } finally {
      await client.close();
    }
  });

  it("sends a load balancer's stickiness cookie back within the transaction it came with, and never outside one", async () => {
    // A stand-in for an ALB with stickiness on: answers like the gateway (a transaction's calls by their
    // path) and sets a cookie naming a task on every answer, as the ALB does to a request without one.
    const seen: { path: string; cookie: string | undefined }[] = [];
    let answered = 0;
    const server = http.createServer((request, response) => {
      seen.push({ path: request.url ?? "", cookie: request.headers.cookie });
      request.resume();
      request.on("end", () => {
        answered++;
        const cookies = [`AWSALB=task-${answered}; Expires=Thu, 01 Jan 2099 00:00:00 GMT; Path=/`, `AWSALBAPP-0=app-${answered}; Path=/`, "other=1"];
        const result = { command: "SELECT", columns: [], rows: [], rowCount: 0, attempts: 1 };
        const body =
          request.url === "/v1/transactions"
            ? { transactionId: `tx-${answered}` }
            : request.url === "/v1/batch"
              ? { results: [result], attempts: 1 }
              : request.url?.endsWith("/commit")
                ? {}
                : result;
        response.writeHead(200, { "content-type": "application/json", "set-cookie": cookies });
        response.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const client = createClient({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}` });
    try {
      await client.query("select 1");
      await client.query("select 1");
      await client.transaction(async (tx) => {
        await tx.query("select 1");
        await tx.query("select 2");
      });
      await client.batch([{ sql: "select 1" }]);
      await client.query("select 1");
      expect(seen).toEqual([
        { path: "/v1/query", cookie: undefined },
        { path: "/v1/query", cookie: undefined },
        { path: "/v1/transactions", cookie: undefined },
        // The transaction's calls carry the cookies its BEGIN was answered with (then each answer's).
        { path: "/v1/query", cookie: "AWSALB=task-3; AWSALBAPP-0=app-3" },
        { path: "/v1/query", cookie: "AWSALB=task-4; AWSALBAPP-0=app-4" },
        { path: "/v1/transactions/tx-3/commit", cookie: "AWSALB=task-5; AWSALBAPP-0=app-5" },
        // After it, nothing pins the client: least-outstanding-requests picks every call's task.
        { path: "/v1/batch", cookie: undefined },
        { path: "/v1/query", cookie: undefined },
      ]);
    } finally {
      await client.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("carries the consistency token from a write to later reads, and lets it travel between invocations", async () => {
    const { sent, sign } = recorder();
    const client = createClient({ url: gw.baseUrl, sign });
    try {
      expect(client.consistencyToken).toBeUndefined();
      await client.query("insert into notes (body) values ('token')");
      const token = client.consistencyToken;
      expect(token).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      await client.query("select count(*) from notes where body = 'token'");
      expect(JSON.parse(sent.at(-1)?.body ?? "{}").consistencyToken).toBe(token);

      // The next invocation (a new client) picks the token up.
      const next = createClient({ url: gw.baseUrl, sign });
      next.consistencyToken = token;
      await next.query("select 1");
      expect(JSON.parse(sent.at(-1)?.body ?? "{}").consistencyToken).toBe(token);
      await next.query("select 1", [], { consistencyToken: null });
      expect(JSON.parse(sent.at(-1)?.body ?? "{}").consistencyToken).toBeUndefined();
      await next.close();
    } finally {
      await client.close();
    }
  });

  it("keeps its connections warm through the platform's fetch", async () => {
    const forwarder = await startForwarder(Number(new URL(gw.baseUrl).port));
    const client = createClient({ url: `http://127.0.0.1:${forwarder.port}` });
    try {
      for (let i = 0; i < 5; i++) await client.query("select 1");
      const warm = forwarder.accepted;
      expect(warm).toBeLessThanOrEqual(2);
      // Warm: later calls reuse the open connections.
      for (let i = 0; i < 20; i++) await client.query("select 1");
      expect(forwarder.accepted).toBe(warm);
    } finally {
      await client.close();
      await forwarder.close();
    }
  });
});
