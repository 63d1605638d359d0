import { describe, expect, it } from "vitest";
import { ManualClock } from "../clock.js";
import { insightsConfigSchema } from "../config/schema.js";
import { mysqlSqlReader } from "../engines/mysql/sql-reader.js";
import { GatewayEvents, type WorkRun } from "../events.js";
import { QueryInsights } from "./query-insights.js";

const START = Date.UTC(2026, 0, 1, 12, 0, 0);

function setup(settings: Partial<Record<string, unknown>> = {}) {
  const clock = new ManualClock(START);
  const events = new GatewayEvents();
  const reader = mysqlSqlReader();
  const config = insightsConfigSchema.parse({ enabled: true, sliceMs: 60000, retainMs: 600000, ...settings });
  const insights = new QueryInsights(config, (cluster) => (cluster === "db" ? reader : undefined), clock, events);
  const work = (principal: string, sql: string, totalMs: number, extra: Partial<WorkRun> = {}): void =>
    events.emit("workRun", { cluster: "db", principal, statements: [sql], totalMs, databaseMs: totalMs / 2, rows: 1, error: undefined, ...extra });
  return { clock, events, insights, work };
}

describe("query insights", () => {
  it("counts calls, rows, errors and the wait/database split per principal and fingerprint", () => {
    const { insights, work } = setup();
    work("alice", "select * from t where id = 1", 10);
    work("alice", "select * from t where id = 2", 30, { error: "DATABASE_ERROR/42S02", rows: 0 });
    work("bob", "select * from t where id = 3", 5);
    const answer = insights.query();
    expect(answer.principals.map(({ principal }) => principal)).toEqual(["alice", "bob"]);
    const [alice] = answer.principals;
    expect(alice?.statements).toHaveLength(1);
    expect(alice?.statements[0]).toMatchObject({
      sample: "select * from t where id = ?",
      calls: 2,
      rows: 1,
      errors: { "DATABASE_ERROR/42S02": 1 },
      totalMs: 40,
      meanMs: 20,
      waitMs: 20,
      databaseMs: 20,
      lastSeen: new Date(START).toISOString(),
    });
  });

  it("reads p99 from its buckets within 10% above the true value, never above the largest time", () => {
    const { insights, work } = setup();
    for (let i = 1; i <= 100; i++) work("alice", "select 1", i);
    const [row] = insights.query().principals[0]?.statements ?? [];
    expect(row?.p99Ms).toBeGreaterThanOrEqual(99);
    expect(row?.p99Ms).toBeLessThanOrEqual(100);
    const { insights: single, work: once } = setup();
    once("alice", "select 1", 42);
    expect(single.query().principals[0]?.statements[0]?.p99Ms).toBe(42);
  });

  it("keeps topPerPrincipal fingerprints and maxPrincipals principals, counting the rest as (other)", () => {
    const { insights, work } = setup({ topPerPrincipal: 2, maxPrincipals: 2 });
    for (const table of ["a", "b", "c", "d"]) work("alice", `select * from ${table}`, 1);
    work("bob", "select 1", 1);
    work("carol", "select 1", 1);
    work("dave", "select 1", 1);
    const answer = insights.query();
    const alice = answer.principals.find(({ principal }) => principal === "alice");
    expect(alice?.statements.map(({ fingerprint }) => fingerprint).filter((id) => id === "(other)")).toHaveLength(1);
    expect(alice?.statements).toHaveLength(3);
    expect(alice?.statements.find(({ fingerprint }) => fingerprint === "(other)")?.calls).toBe(2);
    expect(answer.principals.map(({ principal }) => principal).sort()).toEqual(["(other)", "alice", "bob"]);
    expect(answer.principals.find(({ principal }) => principal === "(other)")?.calls).toBe(2);
  });

  it("reads a window to whole slices and forgets slices older than retainMs", () => {
    const { clock, insights, work } = setup({ sliceMs: 60000, retainMs: 180000 });
    work("alice", "select 1", 1);
    clock.advance(120000);
    work("alice", "select 1", 1);
    expect(insights.query().principals[0]?.calls).toBe(2);
    expect(insights.query({ since: START + 60000 }).principals[0]?.calls).toBe(1);
    expect(insights.query({ until: START + 30000 }).principals[0]?.calls).toBe(1);
    expect(insights.query({ since: START + 300000 }).principals).toEqual([]);
    clock.advance(180000);
    work("alice", "select 1", 1);
    // The first slice ended more than retainMs ago.
    expect(insights.query({ since: 0 }).principals[0]?.calls).toBe(2);
  });

  it("lists the top rows across principals for the metrics, most total time first", () => {
    const { insights, work } = setup();
    work("alice", "select 1", 5);
    work("bob", "select 2 from t", 50);
    work("carol", "select 3 from u", 20);
    expect(insights.top(2, 60000).map(({ principal }) => principal)).toEqual(["bob", "carol"]);
    expect(insights.top(0, 60000)).toEqual([]);
  });

  it("counts nothing while off", () => {
    const clock = new ManualClock(START);
    const events = new GatewayEvents();
    const insights = new QueryInsights(insightsConfigSchema.parse({}), () => mysqlSqlReader(), clock, events);
    events.emit("workRun", { cluster: "db", principal: "alice", statements: ["select 1"], totalMs: 1, databaseMs: 1, rows: 1, error: undefined });
    expect(insights.query()).toMatchObject({ enabled: false, principals: [] });
  });
});
