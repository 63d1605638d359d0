import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startTestGateway } from "../support/gateway.js";
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
});
