/** A replica that stops answering without refusing connections must not hold reads or the monitor up. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BlackHole, startBlackHole } from "../../support/black-hole.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

let db: TestDatabase;
let hole: BlackHole;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase();
  hole = await startBlackHole();
  gw = await startTestGateway({
    clusters: { default: { writerUrl: db.url, readerUrls: [`postgres://postgres@127.0.0.1:${hole.port}/test`] } },
    pool: { maxSize: 2, connectTimeoutMs: 300, acquireTimeoutMs: 2000 },
    topology: { checkIntervalMs: 100, checkTimeoutMs: 200 },
  });
});

afterAll(async () => {
  await gw?.stop();
  await hole?.close();
  await db?.drop();
});

describe("a black-holed replica", () => {
  it("is reported unhealthy and gets no reads, which the primary serves", async () => {
    const status = (await gw.get("/v1/admin/topology")).body.clusters.default;
    expect(status.endpoints.find((e: { name: string }) => e.name === "default/reader1")).toMatchObject({ healthy: false, role: "unknown" });
    for (let i = 0; i < 10; i++) {
      const response = await gw.post("/v1/query", { sql: "select current_database() as db" });
      expect(response.status).toBe(200);
      expect(response.body.rows[0].db).toBe(db.name);
    }
  });
});
