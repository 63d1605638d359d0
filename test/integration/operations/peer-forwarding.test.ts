/**
 * Two gateway tasks behind one load balancer: a transaction begun on one is usable from the other,
 * which forwards each call to the owner named (and signed) in the transaction id — the native API
 * and the Data API alike. Without the shared key, or with an altered id, nothing is forwarded.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { type CapturedLogs, captureLogs } from "../../support/log-capture.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

const PEER_KEY = "a shared peer key for the gateway's tasks, 32+ chars";
const target = { resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:c", secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:s" };

let db: TestDatabase;
let a: TestGateway;
let b: TestGateway;
/** The owner's log (`a`): one line per answered request. */
let ownerLogs: CapturedLogs;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.admin.query("create table ledger (note text not null)");
  ownerLogs = captureLogs("info");
  [a, b] = await Promise.all([
    startTestGateway({ clusters: { default: { writerUrl: db.url } }, peers: { key: PEER_KEY }, log: { requests: true } }, { logger: ownerLogs.logger }),
    startTestGateway({ clusters: { default: { writerUrl: db.url } }, peers: { key: PEER_KEY } }),
  ]);
});

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await db?.drop();
});

const count = async (note: string) => (await db.admin.query("select count(*)::int as n from ledger where note = $1", [note])).rows[0].n as number;

describe("transactions across gateway tasks", () => {
  it("serves a native transaction begun on one task from the other", async () => {
    const id = (await a.post("/v1/transactions", {})).body.transactionId as string;
    expect(id.split("~")).toHaveLength(3);
    const inserted = await b.post("/v1/query", { sql: "insert into ledger values ($1)", params: ["native"], transactionId: id });
    expect(inserted.status, JSON.stringify(inserted.body)).toBe(200);
    expect(await count("native")).toBe(0);
    expect((await b.post(`/v1/transactions/${encodeURIComponent(id)}/commit`, undefined)).body.outcome).toBe("committed");
    expect(await count("native")).toBe(1);
    expect((await a.get("/healthz")).body.clusters.default.openTransactions).toBe(0);
  });

  it("forwards a commit's idempotency key to the owner, and its replay answer back", async () => {
    const id = (await a.post("/v1/transactions", {})).body.transactionId as string;
    await b.post("/v1/query", { sql: "insert into ledger values ($1)", params: ["keyed"], transactionId: id });
    const key = { "idempotency-key": "forwarded-commit-1" };
    const committed = await b.post(`/v1/transactions/${encodeURIComponent(id)}/commit`, {}, key);
    expect(committed.body).toMatchObject({ transactionId: id, outcome: "committed" });
    expect(committed.body.replayed).toBeUndefined();
    const replayed = await b.post(`/v1/transactions/${encodeURIComponent(id)}/commit`, {}, key);
    expect(replayed.body).toMatchObject({ transactionId: id, outcome: "committed", replayed: true });
    expect(replayed.headers.get("x-poolgate-idempotent-replay")).toBe("true");
    expect(await count("keyed")).toBe(1);
  });

  it("forwards the caller's correlation id, so the owner's log names it too", async () => {
    const id = (await a.post("/v1/transactions", {})).body.transactionId as string;
    const correlated = { "x-correlation-id": "JmIzLgfqIAMEMhw=" };
    expect((await b.post("/v1/query", { sql: "select 1", transactionId: id }, correlated)).status).toBe(200);
    await b.post(`/v1/transactions/${encodeURIComponent(id)}/rollback`, undefined, correlated);
    const lines = ownerLogs.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === "request" && line.correlationId === "JmIzLgfqIAMEMhw=");
    expect(lines.map((line) => line.route)).toEqual(["/v1/query", "/v1/transactions/:id/rollback"]);
  });

  it("serves a Data API transaction begun on one task from the other", async () => {
    const begun = await fetch(`${a.baseUrl}/BeginTransaction`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(target) });
    const { transactionId } = (await begun.json()) as { transactionId: string };
    const execute = await fetch(`${b.baseUrl}/Execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...target, transactionId, sql: "insert into ledger values (:note)", parameters: [{ name: "note", value: { stringValue: "data-api" } }] }),
    });
    expect(execute.status).toBe(200);
    expect(execute.headers.get("x-amzn-requestid")).toBeTruthy();
    const rolledBack = await fetch(`${b.baseUrl}/RollbackTransaction`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...target, transactionId }) });
    expect(await rolledBack.json()).toEqual({ transactionStatus: "Rollback Complete" });
    expect(await count("data-api")).toBe(0);
  });

  it("forwards nothing for an altered id", async () => {
    const id = (await a.post("/v1/transactions", {})).body.transactionId as string;
    const [uuid, , signature] = id.split("~") as [string, string, string];
    const retargeted = [uuid, Buffer.from("http://127.0.0.1:1").toString("base64url"), signature].join("~");
    const response = await b.post("/v1/query", { sql: "select 1", transactionId: retargeted });
    expect(response.body.error.code).toBe("TRANSACTION_NOT_FOUND");
    await a.post(`/v1/transactions/${encodeURIComponent(id)}/rollback`, undefined);
  });
});
