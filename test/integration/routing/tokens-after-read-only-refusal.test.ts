/**
 * A write refused in a READ ONLY batch makes the gateway ask the session's instance whether it was
 * demoted, on a session whose transaction has failed (25P02 to anything but ROLLBACK). That answer
 * says nothing about the instance's WAL functions: later writes keep their consistency tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

describe("consistency tokens after a write refused in a READ ONLY batch (PostgreSQL)", () => {
  let db: TestDatabase;
  let gateway: TestGateway;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.admin.query("create table notes (id serial primary key, body text)");
    gateway = await startTestGateway({ clusters: { default: { writerUrl: db.url } } });
  });

  afterAll(async () => {
    await gateway?.stop();
    await db?.drop();
  });

  it("are still answered, and the endpoint shows no refusal of its positions", async () => {
    const refused = await gateway.post("/v1/batch", { statements: [{ sql: "insert into notes (body) values ('ro')" }], readOnly: true });
    expect(refused.body.error.database.sqlstate).toBe("25006");
    const write = await gateway.post("/v1/query", { sql: "insert into notes (body) values ('after')" });
    expect(write.body.consistencyToken).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    const topology = await gateway.get("/v1/admin/topology");
    expect(topology.body.clusters.default.endpoints[0].positionsRefused).toBeNull();
  });
});
