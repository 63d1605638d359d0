/**
 * The failover hook and the canary reaching every gateway task, not only the one a load balancer picks:
 * two real gateways on the real local PostgreSQL, bound to 127.0.0.2 and 127.0.0.3 on one port (as two
 * Fargate tasks have two addresses and one container port), listed by an ECS stand-in (ListTasks pages,
 * DescribeTasks). The tables come from the project's own migrations. Powertools' output is read back:
 * the correlation id is the EventBridge event's id, and the metrics count the tasks.
 */
import { randomBytes } from "node:crypto";
import type { Context, EventBridgeEvent, ScheduledEvent } from "aws-lambda";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { grantScript } from "../../support/database-logins.js";
import { loadMigrations } from "../../../functions/migrate/migration-files.js";
import { runMigrations } from "../../../functions/migrate/migrator.js";
import { postgresMigrationEngine } from "../../../functions/migrate/postgres.js";
import { type EcsStandIn, startEcsStandIn } from "../../support/ecs-standin.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { unusedPort } from "../../support/ports.js";
import { ADMIN_URL, createTestDatabase, type TestDatabase } from "../../support/postgres.js";

const CLUSTER = "arn:aws:ecs:us-east-1:123456789012:cluster/poolgate";
const SERVICE = "poolgate-gateway";
const suffix = randomBytes(4).toString("hex");

let db: TestDatabase;
let ecs: EcsStandIn;
let port: number;
const gateways: TestGateway[] = [];

function lambdaContext(functionName: string): Context {
  const deadline = Date.now() + 15_000;
  return {
    functionName,
    awsRequestId: `req-${randomBytes(4).toString("hex")}`,
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: "256",
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  } as unknown as Context;
}

/** Runs `work` and returns what it printed as parsed JSON lines. */
async function captured<T>(work: () => Promise<T>): Promise<{ value: T | Error; lines: Record<string, unknown>[] }> {
  const chunks: string[] = [];
  const record = (chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString());
    return true;
  };
  const spies = [vi.spyOn(process.stdout, "write").mockImplementation(record), vi.spyOn(process.stderr, "write").mockImplementation(record)];
  try {
    const value = await work().catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
    return { value, lines: chunks.join("").split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as Record<string, unknown>) };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}

const metric = (lines: Record<string, unknown>[], name: string) => lines.find((line) => "_aws" in line && name in line)?.[name];

beforeAll(async () => {
  db = await createTestDatabase();
  const admin = new URL(ADMIN_URL);
  await runMigrations({
    engine: postgresMigrationEngine,
    settings: { host: admin.hostname, port: Number(admin.port || 5432), database: db.name, tls: "disable" },
    admin: { current: { username: decodeURIComponent(admin.username) || "postgres", password: decodeURIComponent(admin.password) } },
    logins: [
      { access: "read-write", username: `tasks_rw_${suffix}`, password: "unused-here" },
      { access: "read-only", username: `tasks_ro_${suffix}`, password: "unused-here" },
    ],
    migrations: loadMigrations(new URL("../../../functions/migrate/migrations/postgres/", import.meta.url).pathname),
    grantScript: grantScript("postgres"),
  });
  port = await unusedPort();
  for (const host of ["127.0.0.2", "127.0.0.3"]) gateways.push(await startTestGateway({ clusters: { default: { writerUrl: db.url } }, server: { host, port } }));
  ecs = await startEcsStandIn(CLUSTER, SERVICE);
  ecs.setTasks([{ address: "127.0.0.2" }, { address: "127.0.0.3" }, { address: "127.0.0.4", lastStatus: "PROVISIONING" }, { address: "127.0.0.5", healthStatus: "UNKNOWN" }]);
  Object.assign(process.env, {
    POOLGATE_URL: `http://127.0.0.2:${port}`,
    POOLGATE_ECS_CLUSTER: CLUSTER,
    POOLGATE_ECS_SERVICE: SERVICE,
    POOLGATE_TASK_PORT: String(port),
    AWS_ENDPOINT_URL_ECS: ecs.url,
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
    AWS_SECRET_ACCESS_KEY: "example-secret",
    POWERTOOLS_TRACE_ENABLED: "false",
    POWERTOOLS_DEV: "false",
    AWS_LAMBDA_FUNCTION_NAME: "test-function",
    // What Lambda sets for an on-demand execution environment: Powertools' cold-start detection reads it.
    AWS_LAMBDA_INITIALIZATION_TYPE: "on-demand",
  });
}, 60000);

afterAll(async () => {
  for (const gateway of gateways) await gateway.stop().catch(() => undefined);
  await ecs?.close();
  await db?.drop();
  const cleanup = new pg.Client({ connectionString: ADMIN_URL });
  await cleanup.connect();
  for (const role of [`tasks_rw_${suffix}`, `tasks_ro_${suffix}`]) await cleanup.query(`drop role if exists ${role}`);
  await cleanup.end();
});

const scheduled: ScheduledEvent = {
  version: "0",
  id: "5f0c6d1e-1111-2222-3333-444455556666",
  "detail-type": "Scheduled Event",
  source: "aws.events",
  account: "123456789012",
  time: "2026-11-23T12:00:00Z",
  region: "us-east-1",
  resources: [],
  detail: {},
};

const failoverEvent: EventBridgeEvent<"RDS DB Cluster Event", { EventID: string; SourceIdentifier: string; Message: string }> = {
  version: "0",
  id: "7bf73129-1428-4cd3-a780-95db273d1602",
  "detail-type": "RDS DB Cluster Event",
  source: "aws.rds",
  account: "123456789012",
  time: "2026-11-23T12:00:00Z",
  region: "us-east-1",
  resources: [],
  detail: { EventID: "RDS-EVENT-0071", SourceIdentifier: "poolgate-db", Message: "Completed failover to DB instance: poolgate-db-reader1" },
};

describe("the canary", () => {
  it("checks through the load balancer and on every running task, each with a fresh client", async () => {
    const { handler } = await import("../../../functions/canary/handler.js");
    const run = await captured(() => handler(scheduled, lambdaContext("poolgate-canary")));
    if (run.value instanceof Error) throw run.value;
    expect(run.value.checks.map((check) => [check.target, check.ok])).toEqual([
      ["load balancer", true],
      [`task 127.0.0.2:${port}`, true],
      [`task 127.0.0.3:${port}`, true],
    ]);
    expect(metric(run.lines, "CanarySuccess")).toBe(1);
    expect(metric(run.lines, "CanaryChecks")).toBe(3);
    expect(metric(run.lines, "ColdStart")).toBe(1);
    // Two pages of ListTasks, one DescribeTasks.
    expect(ecs.calls("ListTasks")).toBe(2);
    expect(run.lines.find((line) => line.message === "canary passed")).toMatchObject({ correlation_id: scheduled.id, function_name: "poolgate-canary", cold_start: true });
  });
});

describe("the failover hook", () => {
  it("asks every running task to refresh its topology, with the event's id as correlation id", async () => {
    const { handler } = await import("../../../functions/failover-hook/handler.js");
    const run = await captured(() => handler(failoverEvent, lambdaContext("poolgate-failover-hook")));
    if (run.value instanceof Error) throw run.value;
    expect(run.value.refreshed).toBe(2);
    expect(run.value.tasks.map((task) => task.url)).toEqual([`http://127.0.0.2:${port}`, `http://127.0.0.3:${port}`]);
    expect(metric(run.lines, "TasksRefreshed")).toBe(2);
    expect(run.lines.find((line) => line.message === "topology refreshed on every task after an RDS event")).toMatchObject({ correlation_id: failoverEvent.id, eventId: "RDS-EVENT-0071" });
  });

  it("fails the invocation, after refreshing the others, when a task cannot be reached — and so does the canary", async () => {
    await gateways[1]?.stop();
    const hook = await import("../../../functions/failover-hook/handler.js");
    const refresh = await captured(() => hook.handler(failoverEvent, lambdaContext("poolgate-failover-hook")));
    expect(refresh.value).toBeInstanceOf(Error);
    expect((refresh.value as Error).message).toBe("the topology refresh failed on 1 of 2 gateway tasks");
    expect(metric(refresh.lines, "TasksRefreshed")).toBe(1);
    expect(metric(refresh.lines, "TasksNotRefreshed")).toBe(1);
    const canary = await import("../../../functions/canary/handler.js");
    const check = await captured(() => canary.handler(scheduled, lambdaContext("poolgate-canary")));
    expect((check.value as Error).message).toMatch(new RegExp(`^canary failed: task 127\\.0\\.0\\.3:${port}: `));
    expect(metric(check.lines, "CanarySuccess")).toBe(0);
    expect(metric(check.lines, "CanaryChecksFailed")).toBe(1);
  });
});
