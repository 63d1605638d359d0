/** The gateway's pool metrics as CloudWatch EMF lines on stdout, when enabled (the CDK stack's pool-wait alarm reads them). */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";
import { waitFor } from "../../support/wait-for.js";

let db: TestDatabase;
let gw: TestGateway | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await gw?.stop();
  await db?.drop();
});

describe("EMF pool metrics", () => {
  it("writes one document per endpoint every interval, with the acquires in between", async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      lines.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString());
      return true;
    });
    try {
      gw = await startTestGateway({ clusters: { default: { writerUrl: db.url } }, metrics: { emf: { enabled: true, intervalMs: 1000 } } });
      for (let i = 0; i < 5; i++) await gw.post("/v1/query", { sql: "select 1" });
      const documents = () => lines.filter((line) => line.includes('"_aws"')).map((line) => JSON.parse(line) as Record<string, unknown>);
      // The five may straddle an interval on a loaded machine: counted across the documents.
      const acquires = () => documents().reduce((sum, doc) => sum + (typeof doc.PoolAcquires === "number" ? doc.PoolAcquires : 0), 0);
      await waitFor(() => acquires() >= 5, 15000, "documents counting the queries");
      const document = documents().find((doc) => (doc.PoolAcquires as number) > 0);
      expect(document).toMatchObject({ cluster: "default", endpoint: "default/writer", PoolTotal: 10, _aws: { CloudWatchMetrics: [{ Namespace: "Poolgate" }] } });
      expect(typeof document?.PoolAcquireWaitP99).toBe("number");
    } finally {
      spy.mockRestore();
    }
  });
});
