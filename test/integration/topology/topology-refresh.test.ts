/**
 * POST /v1/admin/topology/refresh: the hook an RDS failover event calls so the gateway looks at its
 * topology at once instead of at the next monitor round.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";
import { startForwarder, type TcpForwarder } from "../../support/tcp-forwarder.js";

let db: TestDatabase;
let forwarder: TcpForwarder;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase();
  forwarder = await startForwarder(Number(new URL(db.url).port));
  gw = await startTestGateway({
    clusters: { default: { writerUrl: forwarder.url(db.name) } },
    // A monitor round a minute away: only the refresh can make the gateway see the change in time.
    topology: { checkIntervalMs: 60000, checkTimeoutMs: 500 },
  });
});

afterAll(async () => {
  await gw?.stop();
  await forwarder?.close().catch(() => undefined);
  await db?.drop();
});

describe("topology refresh", () => {
  it("looks at every endpoint at once when asked, and refuses an unknown cluster", async () => {
    const writer = async () => (await gw.get("/v1/admin/topology")).body.clusters.default.endpoints[0];
    expect(await writer()).toMatchObject({ role: "primary", healthy: true });
    await forwarder.close();
    // Nothing has looked yet.
    expect(await writer()).toMatchObject({ role: "primary", healthy: true });
    const refreshed = await gw.post("/v1/admin/topology/refresh", {});
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.clusters.default.endpoints[0]).toMatchObject({ healthy: false, role: "unknown" });
    const unknown = await gw.post("/v1/admin/topology/refresh", { cluster: "nope" });
    expect(unknown.body.error.code).toBe("INVALID_REQUEST");
  });
});
