/** A request body's run options reach the planner through workRequestOf exactly as the body gave them. */
import { describe, expect, it } from "vitest";
import { batchRequestSchema, queryRequestSchema } from "../../schemas/query.js";
import { systemClock } from "../clock.js";
import { parseConfig } from "../config/load.js";
import { postgresSqlReader } from "../engines/postgres/sql-reader.js";
import { NATIVE_SURFACE, Planner, workRequestOf } from "./plan.js";
import { UNRESTRICTED } from "./run-as.js";

const config = parseConfig({ clusters: { default: { writerUrl: "postgres://u:p@127.0.0.1:5432/db" } } }, "test");
const planner = new Planner(config, postgresSqlReader([]), () => true, systemClock, "default");

describe("workRequestOf", () => {
  it("carries every option the planner reads, and nothing the route keeps for itself", () => {
    const body = queryRequestSchema.parse({
      sql: "SELECT 1",
      params: [],
      cluster: "default",
      rowMode: "array",
      timeoutMs: 1234,
      bigNumbers: "number",
      intent: "write",
      consistencyToken: "0/16B3748",
      maxStalenessMs: 50,
    });
    const request = workRequestOf(body, [{ sql: body.sql }], "statement");
    expect(request).toEqual({
      statements: [{ sql: "SELECT 1" }],
      scope: "statement",
      idempotency: undefined,
      timeoutMs: 1234,
      bigNumbers: "number",
      intent: "write",
      consistencyToken: "0/16B3748",
      maxStalenessMs: 50,
      isolation: undefined,
      readOnly: undefined,
    });
    const plan = planner.plan(request, NATIVE_SURFACE, UNRESTRICTED);
    expect(plan.options).toMatchObject({ timeoutMs: 1234, bigNumbers: "number" });
    expect(plan.intent).toBe("write");
    expect(plan.route).toMatchObject({ intent: "write", consistencyToken: "0/16B3748", maxStalenessMs: 50 });
  });

  it("carries a batch's isolation and READ ONLY", () => {
    const body = batchRequestSchema.parse({ statements: [{ sql: "SELECT 1" }], isolation: "serializable", readOnly: true });
    const plan = planner.plan(workRequestOf(body, body.statements, "batch"), NATIVE_SURFACE, UNRESTRICTED);
    expect(plan.isolation).toBe("serializable");
    expect(plan.readOnly).toBe(true);
    expect(plan.intent).toBe("read");
  });
});
