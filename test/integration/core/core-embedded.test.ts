import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startTestGateway } from "../../support/gateway.js";
import { defineCoreSuite, POSTGRES_DIALECT } from "./core-suite.js";

defineCoreSuite({
  name: "the embedded PostgreSQL (PGlite)",
  dialect: POSTGRES_DIALECT,
  async setup() {
    const dataDir = mkdtempSync(join(tmpdir(), "poolgate-embedded-test-"));
    return { config: { embedded: { dataDir } }, cleanup: async () => rmSync(dataDir, { recursive: true, force: true }) };
  },
});

describe("embedded default", () => {
  it("keeps its data in the data directory across restarts", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "poolgate-embedded-restart-"));
    try {
      const first = await startTestGateway({ embedded: { dataDir } });
      await first.post("/v1/query", { sql: "create table kept (note text)" });
      await first.post("/v1/query", { sql: "insert into kept values ($1)", params: ["survives"] });
      await first.stop();
      const second = await startTestGateway({ embedded: { dataDir } });
      const response = await second.post("/v1/query", { sql: "select note from kept" });
      await second.stop();
      expect(response.body.rows).toEqual([{ note: "survives" }]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("refuses a second gateway on the same data directory (two servers on the same files would corrupt them); the first keeps its data and answers", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "poolgate-embedded-twice-"));
    const first = await startTestGateway({ embedded: { dataDir } });
    try {
      await first.post("/v1/query", { sql: "create table owned (note text)" });
      await first.post("/v1/query", { sql: "insert into owned values ($1)", params: ["first"] });
      await expect(startTestGateway({ embedded: { dataDir } })).rejects.toThrow(/in use by process \d+.*POOLGATE_DATA_DIR/);
      const response = await first.post("/v1/query", { sql: "select note from owned" });
      expect(response.status).toBe(200);
      expect(response.body.rows).toEqual([{ note: "first" }]);
    } finally {
      await first.stop();
    }
    // Once the first has stopped, the directory is free again, with its data.
    const next = await startTestGateway({ embedded: { dataDir } });
    try {
      expect((await next.post("/v1/query", { sql: "select note from owned" })).body.rows).toEqual([{ note: "first" }]);
    } finally {
      await next.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("keeps writes exactly-once under a key on its single session, a transaction's commit included", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "poolgate-embedded-keys-"));
    const gateway = await startTestGateway({ embedded: { dataDir } });
    try {
      await gateway.post("/v1/query", { sql: "create table keyed (note text)" });
      const write = { sql: "insert into keyed values ($1)", params: ["once"], idempotencyKey: "embedded-write-1" };
      expect((await gateway.post("/v1/query", write)).body.replayed).toBeUndefined();
      expect((await gateway.post("/v1/query", write)).body.replayed).toBe(true);
      // The transaction pins the one session: the record's table was made at start, not now.
      const id = (await gateway.post("/v1/transactions", {})).body.transactionId as string;
      await gateway.post("/v1/query", { sql: "insert into keyed values ('tx')", transactionId: id });
      expect((await gateway.post(`/v1/transactions/${id}/commit`, { idempotencyKey: "embedded-commit-1" })).status).toBe(200);
      expect((await gateway.post(`/v1/transactions/${id}/commit`, { idempotencyKey: "embedded-commit-1" })).body.replayed).toBe(true);
      expect((await gateway.post("/v1/query", { sql: "select count(*)::int as n from keyed" })).body.rows).toEqual([{ n: 2 }]);
    } finally {
      await gateway.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("streams a result in batches through the PostgreSQL engine, a failure midway as the last line", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "poolgate-embedded-stream-"));
    const gateway = await startTestGateway({ embedded: { dataDir }, streams: { fetchRows: 10 } });
    try {
      const read = async (sql: string) => {
        const response = await fetch(`${gateway.baseUrl}/v1/query/stream`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ sql, rowMode: "array" }) });
        expect(response.status).toBe(200);
        return (await response.text()).trim().split("\n").map((line) => JSON.parse(line) as unknown);
      };
      const whole = await read("select g from generate_series(1, 25) g");
      expect(whole).toEqual([{ columns: [{ name: "g", type: "int4" }] }, ...Array.from({ length: 25 }, (_, i) => [i + 1]), { command: "SELECT", rowCount: 25, attempts: 1 }]);
      const failed = await read("select 1/(g - 15) from generate_series(1, 25) g");
      expect(failed.length).toBeGreaterThan(2);
      expect(failed.at(-1)).toMatchObject({ error: { code: "DATABASE_ERROR", database: { sqlstate: "22012" } } });
      expect((await gateway.post("/v1/query", { sql: "select 1 as one" })).body.rows).toEqual([{ one: 1 }]);
    } finally {
      await gateway.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
