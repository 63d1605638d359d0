/**
 * The resilience suite (resilience-suite.ts) on the real local MariaDB through the MySQL engine, then
 * what only MySQL has here: lock-wait timeouts (1205) retried, a deadlock (1213) that ends its
 * transaction, and a string of statements that each commit on their own.
 */
import mysql from "mysql2/promise";
import { describe, expect, it } from "vitest";
import type { TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase, mysqlGatewaySessions } from "../../support/mysql.js";
import { waitFor } from "../../support/wait-for.js";
import { mysqlSeries } from "../core/core-suite.js";
import { defineResilienceSuite } from "./resilience-suite.js";

/** A session of its own that holds counter row `id`'s lock until it commits or rolls back. */
async function lockCounterRow(url: string, id: number): Promise<mysql.Connection> {
  const holder = await mysql.createConnection({ uri: url });
  await holder.query("start transaction");
  await holder.query("select * from counter where id = ? for update", [id]);
  return holder;
}

/** Work the gateway ran again, over every reason (poolgate_retries_total). */
async function retries(gw: TestGateway): Promise<number> {
  const text = await (await fetch(`${gw.baseUrl}/metrics`)).text();
  return text
    .split("\n")
    .filter((line) => line.startsWith("poolgate_retries_total{"))
    .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
}

defineResilienceSuite({
  name: "the local MariaDB server (MySQL engine)",
  async setup() {
    const db = await createTestMysqlDatabase();
    await db.query("create table counter (id int primary key, n int not null) engine=InnoDB");
    await db.query("insert into counter values (1, 0), (2, 0)");
    await db.query("create table log (tag varchar(40) not null) engine=InnoDB");
    return {
      url: db.url,
      admin: async (sql) => void (await db.query(sql)),
      countLog: async (tag) => Number((await db.query<{ n: number }>("select count(*) as n from log where tag = ?", [tag]))[0]?.n),
      counter: async (id) => Number((await db.query<{ n: number }>("select n from counter where id = ?", [id]))[0]?.n),
      sessions: async () => (await mysqlGatewaySessions(db)).map((s) => ({ id: Number(s.id), statement: s.info, busy: s.command !== "Sleep" })),
      kill: async (pattern) => {
        for (const session of await mysqlGatewaySessions(db)) {
          if (pattern === undefined || session.info?.includes(pattern)) await db.admin.query(`KILL ${Number(session.id)}`);
        }
      },
      drop: () => db.drop(),
    };
  },
  sql: {
    sleep: (seconds) => `select sleep(${seconds})`,
    slowInsert: { sql: "insert into log select 'unknown' from (select sleep(3)) s", marker: "'unknown' from (select sleep" },
    sleepUntilMarker: "select sleep(if((select count(*) from log where tag = 'marker') = 0, 3, 0)) /* batch-sleep */",
    readOnlyWrite: { sql: "set session transaction read only; insert into log values ('read-only')", database: { engineCode: 1792 } },
    sessionId: "select connection_id() as id",
    fail: "select * from no_such_table",
    bigResult: `select repeat('x', 1000) from ${mysqlSeries(20000)}`,
    sessionChanges: "set @x = 1; set time_zone = '+03:00'",
    createTemp: "create temporary table t (x int)",
  },
  failures: (query, gw) => [
    () => query("select ? + ?", { params: [1] }),
    async () => {
      const begun = await gw.post("/v1/transactions", {});
      if (begun.status !== 201) return begun;
      await query("insert into log values ('x')", { transactionId: begun.body.transactionId });
      await query("select * from no_such_table", { transactionId: begun.body.transactionId });
      return gw.post(`/v1/transactions/${begun.body.transactionId}/rollback`, undefined).then(() => ({ status: 400 }));
    },
  ],
  cleanSession: { sql: "select @@session.time_zone as tz, @x as x", rows: [{ tz: "+00:00", x: null }] },
  engineCases: (context) => {
    describe("MySQL lock waits, deadlocks and strings of statements", () => {
      it("retries a batch that hit a lock-wait timeout (1205) until the lock is released", async () => {
        const { gw, db } = context();
        const holder = await lockCounterRow(db.url, 2);
        try {
          const retriedBefore = await retries(gw);
          const pending = gw.post("/v1/batch", {
            statements: [{ sql: "set innodb_lock_wait_timeout = 1" }, { sql: "update counter set n = n + 1 where id = 2" }],
          });
          await waitFor(async () => (await retries(gw)) > retriedBefore, 10000, "the batch to time out on the lock and be retried");
          await holder.query("commit");
          const response = await pending;
          expect(response.status, JSON.stringify(response.body)).toBe(200);
          expect(response.body.attempts).toBeGreaterThan(1);
          expect(await db.counter(2)).toBe(1);
        } finally {
          await holder.end();
        }
      });

      it("ends a transaction that deadlocked: the statement, later statements and COMMIT answer TRANSACTION_ABORTED, nothing of it stays", async () => {
        const { gw, db, query } = context();
        await db.admin("insert into counter values (3, 0), (4, 0)");
        const first = (await gw.post("/v1/transactions", {})).body.transactionId;
        const second = (await gw.post("/v1/transactions", {})).body.transactionId;
        expect((await query("update counter set n = n + 1 where id = 3", { transactionId: first })).status).toBe(200);
        expect((await query("update counter set n = n + 1 where id = 4", { transactionId: second })).status).toBe(200);
        // Each now waits for the other's row lock: InnoDB picks a victim and rolls its transaction back.
        const [a, b] = await Promise.all([
          query("update counter set n = n + 10 where id = 4", { transactionId: first }),
          query("update counter set n = n + 10 where id = 3", { transactionId: second }),
        ]);
        const outcomes = [a, b].map((response) => (response.status === 200 ? "ok" : response.body.error.code));
        expect(outcomes.sort()).toEqual(["TRANSACTION_ABORTED", "ok"]);
        const victimResponse = a.status === 200 ? b : a;
        expect(victimResponse.body.error).toMatchObject({ retryable: false, database: { engineCode: 1213 } });
        const victim = a.status === 200 ? second : first;
        const survivor = a.status === 200 ? first : second;
        // MySQL would run this in autocommit mode: it is refused without being sent.
        const later = await query("insert into log values ('after-deadlock')", { transactionId: victim });
        expect(later.body.error.code).toBe("TRANSACTION_ABORTED");
        const aborted = await gw.post(`/v1/transactions/${victim}/commit`, undefined);
        expect(aborted.status).toBe(409);
        expect(aborted.body.error.code).toBe("TRANSACTION_ABORTED");
        expect((await gw.post(`/v1/transactions/${survivor}/commit`, undefined)).body.outcome).toBe("committed");
        // Only the survivor's updates are there (+1 on its own row, +10 on the other), none of the victim's.
        expect([await db.counter(3), await db.counter(4)].sort((x, y) => x - y)).toEqual([1, 10]);
        expect(await db.countLog("after-deadlock")).toBe(0);
      });

      it("runs a string of several statements once: each commits on its own, so a conflict in a later one is an unknown outcome", async () => {
        const { db, query } = context();
        const holder = await lockCounterRow(db.url, 2);
        try {
          const response = await query("insert into log values ('multi'); set session innodb_lock_wait_timeout = 1; update counter set n = n + 1 where id = 2");
          expect(response.body.error).toMatchObject({ code: "OUTCOME_UNKNOWN", attempts: 1 });
          expect(await db.countLog("multi")).toBe(1);
        } finally {
          await holder.query("rollback");
          await holder.end();
        }
      });
    });
  },
});
