/** The canary against a MySQL cluster (POOLGATE_ENGINE=mysql): its upsert in MySQL's dialect, through the gateway on the real local MariaDB. */
import type { Context, ScheduledEvent } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase, type TestMysqlDatabase } from "../../support/mysql.js";

let db: TestMysqlDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestMysqlDatabase();
  gw = await startTestGateway({ clusters: { default: { writerUrl: db.url } } });
  await db.query("create table poolgate_canary (id int primary key, marker varchar(200) not null, written_at datetime not null)");
  process.env.POOLGATE_URL = gw.baseUrl;
  process.env.POOLGATE_ENGINE = "mysql";
  process.env.POWERTOOLS_TRACE_ENABLED = "false";
  process.env.AWS_LAMBDA_FUNCTION_NAME = "poolgate-canary";
});

afterAll(async () => {
  await gw?.stop();
  await db?.drop();
});

describe("the canary on MySQL", () => {
  it("writes, overwrites and reads back its row, reporting success twice", async () => {
    const { handler } = await import("../../../functions/canary/handler.js");
    const context = { awsRequestId: "req-1", functionName: "poolgate-canary", getRemainingTimeInMillis: () => 5000 } as unknown as Context;
    const event = { id: "evt", "detail-type": "Scheduled Event", source: "aws.events", detail: {} } as unknown as ScheduledEvent;
    const spies = [vi.spyOn(process.stdout, "write").mockImplementation(() => true), vi.spyOn(process.stderr, "write").mockImplementation(() => true)];
    try {
      expect((await handler(event, context)).ok).toBe(true);
      expect((await handler(event, context)).ok).toBe(true);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(await db.query("select count(*) as n from poolgate_canary")).toEqual([{ n: 1 }]);
  });
});
