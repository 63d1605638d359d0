/** What the planner decides about an idempotency key: kept for writes, ignored where nothing commits, refused where it cannot hold. */
import { describe, expect, it } from "vitest";
import { systemClock } from "../clock.js";
import { parseConfig } from "../config/load.js";
import { mysqlSqlReader } from "../engines/mysql/sql-reader.js";
import { postgresSqlReader } from "../engines/postgres/sql-reader.js";
import { GatewayError } from "../errors.js";
import type { KeyRequest } from "../idempotency/keyed-work.js";
import { NATIVE_SURFACE, Planner, type WorkRequest } from "./plan.js";
import { UNRESTRICTED } from "./run-as.js";

const config = parseConfig({ clusters: { default: { writerUrl: "postgres://u:p@127.0.0.1:5432/db" } } }, "test");
const planners = {
  postgres: new Planner(config, postgresSqlReader([]), () => true, systemClock, "default"),
  mysql: new Planner(config, mysqlSqlReader([]), () => true, systemClock, "default"),
};
const key: KeyRequest = { key: "k-1", surface: "native", answer: () => "{}" };
const statement = (sql: string, extra: Partial<WorkRequest> = {}): WorkRequest => ({ statements: [{ sql }], scope: "statement", idempotency: key, ...extra });
const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    return err instanceof GatewayError ? err : undefined;
  }
  return undefined;
};

describe("the planner and idempotency keys", () => {
  it("keys a write: in a transaction of the gateway's, on the primary, its unknown outcome retried", () => {
    const plan = planners.postgres.plan(statement("insert into t values (1)"), NATIVE_SURFACE, UNRESTRICTED);
    expect(plan.keyed).toMatchObject({ key: "k-1", principal: "" });
    expect(plan.keyed?.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(plan.statements[0]?.mode.text).toBe("in gateway transaction");
    expect(plan.intent).toBe("write");
    expect(plan.retry.unknownOutcomeRetried).toBe(true);
    const batch = planners.mysql.plan({ statements: [{ sql: "insert into t values (1)" }], scope: "batch", idempotency: key }, NATIVE_SURFACE, UNRESTRICTED);
    expect(batch.keyed).toBeDefined();
  });

  it("ignores a key where nothing commits: a read, a READ ONLY batch, a read-only principal", () => {
    expect(planners.postgres.plan(statement("select 1"), NATIVE_SURFACE, UNRESTRICTED).keyed).toBeUndefined();
    expect(planners.postgres.plan(statement("select 1", { intent: "write" }), NATIVE_SURFACE, UNRESTRICTED).keyed).toBeUndefined();
    const readOnlyBatch = { statements: [{ sql: "insert into t values (1)" }], scope: "batch" as const, readOnly: true, idempotency: key };
    expect(planners.postgres.plan(readOnlyBatch, NATIVE_SURFACE, UNRESTRICTED).keyed).toBeUndefined();
    expect(planners.postgres.plan(statement("select 1"), NATIVE_SURFACE, { ...UNRESTRICTED, readOnly: true }).keyed).toBeUndefined();
  });

  it("refuses a key on SQL that commits by itself, and on a statement of an interactive transaction", () => {
    for (const [engine, sql] of [
      ["postgres", "insert into t values (1); commit"],
      ["mysql", "create table t2 (id int)"],
      ["postgres", "selec 1"],
    ] as const) {
      const err = refusal(() => planners[engine].plan(statement(sql), NATIVE_SURFACE, UNRESTRICTED));
      expect(err?.code, sql).toBe("INVALID_REQUEST");
      expect(err?.issues?.[0]?.path, sql).toBe("idempotencyKey");
    }
    const inside = refusal(() => planners.postgres.plan(statement("insert into t values (1)", { scope: "transaction" }), NATIVE_SURFACE, UNRESTRICTED));
    expect(inside?.issues).toEqual([{ path: "idempotencyKey", message: "not allowed inside an interactive transaction" }]);
  });
});
