/** Start-up, configuration errors and graceful drain, in-process and as a real process with SIGTERM. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase, mysqlGatewaySessions } from "../../support/mysql.js";
import { createTestDatabase, gatewaySessions, type TestDatabase } from "../../support/postgres.js";
import { spawnWatched, type WatchedProcess } from "../../support/process-output.js";
import { waitFor } from "../../support/wait-for.js";

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.admin.query("create table drained (tag text)");
});

afterAll(async () => {
  await db?.drop();
});

function startProcess(env: Record<string, string>): WatchedProcess {
  return spawnWatched(process.execPath, ["--import", "tsx", "gateway/main.ts"], { env: { ...process.env, PORT: "0", LOG_LEVEL: "info", ...env } });
}

describe("lifecycle", () => {
  it("drains gracefully: in-flight work finishes, new work is refused, open transactions roll back, sessions close", async () => {
    const gw = await startTestGateway({ clusters: { default: { writerUrl: db.url } }, pool: { maxSize: 3 } });
    const begun = await gw.post("/v1/transactions", {});
    await gw.post("/v1/query", { sql: "insert into drained values ('open-tx')", transactionId: begun.body.transactionId });
    const inFlight = gw.post("/v1/query", { sql: "select pg_sleep(0.5) /* in-flight */, 'done' as status" });
    await waitFor(
      async () => (await gatewaySessions(db)).some((s) => s.query.includes("in-flight") && s.state === "active"),
      5000,
      "in-flight",
    );

    const draining = gw.gateway.drain();
    expect(gw.gateway.draining).toBe(true);
    const refused = await gw.post("/v1/query", { sql: "select 1" }).catch((err: Error) => err);
    if (!(refused instanceof Error)) {
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe("GATEWAY_DRAINING");
      expect(refused.headers.get("retry-after")).toBe("1");
    }
    const finished = await inFlight;
    expect(finished.status).toBe(200);
    expect(finished.body.rows[0].status).toBe("done");
    await draining;

    // Closed sessions leave pg_stat_activity when their backend has exited, a moment after the socket.
    await waitFor(async () => (await gatewaySessions(db)).length === 0, 2000, "every gateway session to end");
    const { rows } = await db.admin.query("select count(*)::int as n from drained");
    expect(rows[0].n).toBe(0);
  });

  it("runs as a process against a real server and exits 0 on SIGTERM after draining", async () => {
    const withPassword = new URL(db.url);
    withPassword.password = "sekrit-password";
    const run = startProcess({ POOLGATE_WRITER_URL: withPassword.toString() });
    await waitFor(() => /listening on (http:\/\/[^"\s]+)/.test(run.output()), 30000, "listening log line");
    const address = /listening on (http:\/\/[^"\s]+)/.exec(run.output())?.[1];
    const response = await fetch(`${address}/v1/query`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ sql: "select current_database() as db" }),
    });
    expect(await response.json()).toMatchObject({ rows: [{ db: db.name }] });
    expect(run.output()).not.toContain("sekrit-password");
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
    expect(run.output()).toContain("drained");
    await waitFor(async () => (await gatewaySessions(db)).length === 0, 2000, "every gateway session to end");
  });

  it("exits on SIGTERM when nothing reads its logs any more (its stdout's reader went away)", async () => {
    // MySQL: its sessions close at once, so "drained" is written just before the exit.
    const mysqlDb = await createTestMysqlDatabase();
    try {
      const run = startProcess({ POOLGATE_WRITER_URL: mysqlDb.url });
      await waitFor(() => /listening on (http:\/\/[^"\s]+)/.test(run.output()), 30000, "listening log line");
      // The reader of its stdout and stderr goes (a log collector that died, `npm start | head`): the
      // lines it writes from now on ("shutting down", "drained") meet a broken pipe.
      run.child.stdout?.destroy();
      run.child.stderr?.destroy();
      run.child.kill("SIGTERM");
      const stillRunning = "still running 10 s after SIGTERM";
      const exited = await Promise.race([run.exited, new Promise<string>((resolve) => setTimeout(() => resolve(stillRunning), 10000))]);
      if (exited === stillRunning) run.child.kill("SIGKILL");
      expect(exited).toBe(0);
      await waitFor(async () => (await mysqlGatewaySessions(mysqlDb)).length === 0, 2000, "every gateway session to end");
    } finally {
      await mysqlDb.drop();
    }
  });

  it("serves a MySQL cluster from POOLGATE_WRITER_URL=mysql://... and drains it on SIGTERM", async () => {
    const mysqlDb = await createTestMysqlDatabase();
    try {
      const run = startProcess({ POOLGATE_WRITER_URL: mysqlDb.url });
      await waitFor(() => /listening on (http:\/\/[^"\s]+)/.test(run.output()), 30000, "listening log line");
      const address = /listening on (http:\/\/[^"\s]+)/.exec(run.output())?.[1];
      const response = await fetch(`${address}/v1/query`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ sql: "select database() as db, ? + 1 as n", params: [41], bigNumbers: "number" }),
      });
      expect(await response.json()).toMatchObject({ rows: [{ db: mysqlDb.name, n: 42 }], columns: [{ name: "db" }, { name: "n", type: "bigint" }] });
      const health = (await (await fetch(`${address}/healthz`)).json()) as { clusters: { default: { engine: string } } };
      expect(health.clusters.default.engine).toBe("mysql");
      run.child.kill("SIGTERM");
      expect(await run.exited).toBe(0);
      await waitFor(async () => (await mysqlGatewaySessions(mysqlDb)).length === 0, 2000, "every gateway session to end");
    } finally {
      await mysqlDb.drop();
    }
  });

  it("refuses to start on an invalid config file and says exactly what is wrong", async () => {
    const dir = mkdtempSync(join(tmpdir(), "poolgate-config-"));
    const file = join(dir, "poolgate.json");
    writeFileSync(file, JSON.stringify({ pool: { maxSize: 0, minIdle: 3, surprise: true }, server: { keepAliveTimeoutMs: -1 } }));
    const run = startProcess({ POOLGATE_CONFIG: file });
    expect(await run.exited).toBe(2);
    const output = run.output();
    expect(output).toContain("invalid configuration");
    expect(output).toContain("pool.maxSize");
    expect(output).toContain("surprise");
    expect(output).toContain("server.keepAliveTimeoutMs");
  });
});
