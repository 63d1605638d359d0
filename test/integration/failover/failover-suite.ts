/**
 * The failover suite, written once and run on each engine over a primary and a synchronous standby
 * (test/support/failover-pair.ts): ten failovers in a row under ten writers and ten readers (kill the
 * primary, promote the standby, count), a write that waits on a frozen primary's pool while the
 * standby is promoted, conflicts retried until the request's deadline, transactions that lost their
 * connection, and draining on both surfaces. Nothing here asserts a time: the bench times failovers.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { GatewayConfigInput } from "../../../gateway/config/schema.js";
import type { FailoverPair } from "../../support/failover-pair.js";
import { runFailoverScenario, topologyOf } from "../../support/failover-scenario.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { holdRequest } from "../../support/held-request.js";
import { captureLogs } from "../../support/log-capture.js";
import { waitFor } from "../../support/wait-for.js";

export interface FailoverTarget {
  name: string;
  start(): Promise<FailoverPair>;
}

const RUNS = 10;

/** The log lines a failover's story needs: warnings and information, and the debug lines about failover signs (not every pooled session's end). */
function isTopologyLine(line: string): boolean {
  return !line.includes('"level":20') || line.includes("failover");
}
const CLUSTER = "default";

function gatewayConfig(pair: FailoverPair, extra: GatewayConfigInput = {}): GatewayConfigInput {
  return {
    clusters: { [CLUSTER]: { writerUrl: pair.writerUrl, readerUrls: [pair.readerUrl] } },
    topology: { checkIntervalMs: 200, checkTimeoutMs: 500, failoverWaitMs: 20000 },
    ...extra,
  };
}

export function defineFailoverSuite(target: FailoverTarget): void {
  describe(`failover on ${target.name}`, () => {
    let pair: FailoverPair;
    let gw: TestGateway;
    const dataApi = { resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:failover", secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:failover" };

    /** Waits until the gateway sees the pair as it is: the primary, and the standby as a healthy replica. */
    const settled = (gateway: TestGateway) =>
      waitFor(
        async () => {
          const topology = await topologyOf(gateway, CLUSTER);
          const standby = topology.endpoints.find((endpoint) => endpoint.name === pair.standbyEndpoint(CLUSTER));
          return topology.primary === pair.primaryEndpoint(CLUSTER) && standby?.role === "replica" && standby.healthy;
        },
        30000,
        "the gateway to see the primary and a healthy standby",
      );

    // The shared gateway's log (debug: topology, pool and failover events), for failure messages.
    const logs = captureLogs("debug");

    beforeAll(async () => {
      pair = await target.start();
      for (const sql of pair.dialect.createTables) await pair.queryPrimary(sql);
      gw = await startTestGateway(gatewayConfig(pair), { logger: logs.logger });
      await settled(gw);
    }, 120000);

    // A test that failed between a promotion and its rejoin leaves no standby: the next one starts
    // from a whole pair, so that one failure is not reported again by every test after it.
    beforeEach(async () => {
      if (!pair.standbyMissing) return;
      await pair.rejoinAsStandby();
      await settled(gw);
    }, 120000);

    afterAll(async () => {
      await gw?.stop();
      await pair?.destroy();
    });

    it("retries SERIALIZABLE conflicts until the request's deadline: 50 rounds of ten increments of one row, none fails", async () => {
      const statements = pair.dialect.increment.map((sql) => ({ sql }));
      const failures: string[] = [];
      let retried = 0;
      for (let round = 0; round < 50; round++) {
        const answers = await Promise.all(Array.from({ length: 10 }, () => gw.post("/v1/batch", { isolation: "serializable", statements })));
        for (const answer of answers) {
          if (answer.status !== 200) failures.push(JSON.stringify(answer.body.error));
          else retried += (answer.body.attempts as number) - 1;
        }
      }
      expect(failures).toEqual([]);
      const [row] = await pair.queryPrimary<{ n: number }>(pair.dialect.counter);
      expect(Number(row?.n)).toBe(500);
      // The conflicts were real: the gateway absorbed them.
      expect(retried).toBeGreaterThan(0);
    }, 120000);

    it(`survives ${RUNS} failovers in a row under 10 writers and 10 readers: no acknowledged write lost, no failed read, one failover each`, async () => {
      for (let run = 1; run <= RUNS; run++) {
        const promoted = pair.standbyEndpoint(CLUSTER);
        logs.lines.length = 0;
        const result = await runFailoverScenario(pair, gw, { cluster: CLUSTER, writers: 10, readers: 10, runId: `run${run}`, writesBeforeKill: 30, afterResumeMs: 200 });
        const context = `run ${run}`;
        // What the gateway recorded and logged during the run: a second failover for one kill names its reason there.
        const story = `${context}: failovers ${JSON.stringify(result.failoversRecorded, null, 1)}\n${logs.lines.filter(isTopologyLine).slice(-80).join("\n")}`;
        expect(result.lost, context).toEqual([]);
        expect(result.reads.filter((read) => read.failure !== undefined).map((read) => read.failure), context).toEqual([]);
        // Only writes in flight when the primary died may fail, and only as "outcome unknown". "In
        // flight" is the gateway's view: a write that reached it after the kill but before it had read
        // its sessions' end (a loaded machine) was written to a session it still believed alive, and
        // it cannot know whether that statement ran. Once it has reported no primary, no write fails.
        const failed = result.writes.filter((write) => write.code !== undefined);
        expect(failed.filter((write) => write.code !== "OUTCOME_UNKNOWN" || write.sentAt > result.noPrimaryAt), context).toEqual([]);
        expect(result.failoversAdded, story).toBe(1);
        expect(result.newPrimary, context).toBe(promoted);
        // The promoted standby's sessions survived its promotion: none was thrown away.
        expect(result.promotedPoolRetired, context).toBe(0);
        expect(result.writes.filter((write) => write.code === undefined && write.sentAt > result.promotedAt).length, context).toBeGreaterThan(0);
        await pair.rejoinAsStandby();
        await settled(gw);
      }
      expect((await topologyOf(gw, CLUSTER)).failovers.length).toBe(RUNS);
      // The metrics saw the same: one failover per run with its duration, and the roles as they are now.
      const metrics = await (await fetch(`${gw.baseUrl}/metrics`)).text();
      const sample = (name: string, labels: string) => Number(metrics.split("\n").find((line) => line.startsWith(`${name}{${labels}}`))?.split(" ").at(-1));
      expect(sample("poolgate_failovers_total", `cluster="${CLUSTER}"`)).toBe(RUNS);
      expect(sample("poolgate_failover_duration_seconds_count", `cluster="${CLUSTER}"`)).toBe(RUNS);
      expect(sample("poolgate_endpoint_role", `cluster="${CLUSTER}",endpoint="${pair.primaryEndpoint(CLUSTER)}",role="primary"`)).toBe(1);
      expect(sample("poolgate_cluster_has_primary", `cluster="${CLUSTER}"`)).toBe(1);
    }, 600000);

    it("applies keyed writes exactly once across a failover: each is sent again under its key until answered, and a key from before replays after", async () => {
      const statements = pair.dialect.increment.map((sql) => ({ sql }));
      const counter = async () => Number((await pair.queryPrimary<{ n: number }>(pair.dialect.counter))[0]?.n);
      const before = await counter();
      const acknowledged: string[] = [];
      const gaveUp: string[] = [];
      let stop = false;
      const writer = async () => {
        while (!stop) {
          const key = randomUUID();
          // Sent again under the same key until answered, as the client SDK does: whatever the first
          // attempts did (OUTCOME_UNKNOWN as the primary died, no primary yet), it is applied once.
          for (let attempt = 1; ; attempt++) {
            const answer = await gw.post("/v1/batch", { isolation: "serializable", statements, idempotencyKey: key, timeoutMs: 30000 });
            if (answer.status === 200) {
              acknowledged.push(key);
              break;
            }
            if (attempt >= 20) {
              gaveUp.push(JSON.stringify(answer.body));
              break;
            }
          }
        }
      };
      const writers = Array.from({ length: 5 }, writer);
      await waitFor(() => acknowledged.length >= 20, 30000, "keyed writes before the failover");
      const [first] = acknowledged as [string];
      const promoted = pair.standbyEndpoint(CLUSTER);
      await pair.killPrimary();
      await pair.promoteStandby();
      await waitFor(async () => (await topologyOf(gw, CLUSTER)).primary === promoted, 30000, "the gateway to see the promoted standby");
      const atPromotion = acknowledged.length;
      await waitFor(() => acknowledged.length >= atPromotion + 20, 30000, "keyed writes after the failover");
      stop = true;
      await Promise.all(writers);
      expect(gaveUp).toEqual([]);
      expect((await counter()) - before).toBe(acknowledged.length);
      const replay = await gw.post("/v1/batch", { isolation: "serializable", statements, idempotencyKey: first });
      expect(replay.body.replayed).toBe(true);
      expect((await counter()) - before).toBe(acknowledged.length);
      await pair.rejoinAsStandby();
      await settled(gw);
    }, 180000);

    it("moves a write waiting on a frozen primary's pool to the promoted standby: it succeeds, and there is no second failover", async () => {
      // One connection, checked before every use: the write's liveness check hangs on the frozen
      // primary, and a second write queues behind it on the same pool.
      // Its log (debug: pool and topology events) goes into the failure message, should this fail.
      const logs = captureLogs("debug");
      const frozen = await startTestGateway(gatewayConfig(pair, { pool: { maxSize: 1, aliveBypassMs: 0 } }), { logger: logs.logger });
      try {
        await settled(frozen);
        expect((await frozen.post("/v1/query", { sql: pair.dialect.insert, params: ["frozen-warm"] })).status).toBe(200);
        const failoversBefore = (await topologyOf(frozen, CLUSTER)).failovers.length;
        const promoted = pair.standbyEndpoint(CLUSTER);
        await pair.freezePrimary();
        const first = frozen.post("/v1/query", { sql: pair.dialect.insert, params: ["frozen-1"], timeoutMs: 60000 });
        const second = frozen.post("/v1/query", { sql: pair.dialect.insert, params: ["frozen-2"], timeoutMs: 60000 });
        await waitFor(async () => (await topologyOf(frozen, CLUSTER)).primary === null, 30000, "the gateway to report no primary");
        await pair.promoteStandby();
        await waitFor(async () => (await topologyOf(frozen, CLUSTER)).primary === promoted, 30000, "the gateway to see the promoted standby");
        await pair.killStandby();
        const answers = await Promise.all([first, second]);
        const story = `${JSON.stringify(answers.map((answer) => answer.body))}\n${logs.lines.slice(-60).join("\n")}`;
        expect(answers.map((answer) => answer.status), story).toEqual([200, 200]);
        const ids = (await pair.queryPrimary<{ id: string }>(pair.dialect.ids)).map((row) => row.id);
        expect(ids).toEqual(expect.arrayContaining(["frozen-1", "frozen-2"]));
        // The old primary's late failures were not taken for a second failover.
        const topology = await topologyOf(frozen, CLUSTER);
        expect(topology.failovers.length - failoversBefore).toBe(1);
        expect(topology.primary).toBe(promoted);
      } finally {
        await frozen.stop();
      }
      await pair.rejoinAsStandby();
      await settled(gw);
    }, 180000);

    it("runs a read that was in flight on a primary that died again on the promoted standby, within its deadline (Data API: everything runs on the writer)", async () => {
      const marker = `read-in-flight-${Date.now()}`;
      await pair.lockBlocker();
      const read = gw.post("/Execute", { ...dataApi, sql: pair.dialect.blockedRead(marker) });
      await waitFor(async () => (await pair.sessionsWaiting(marker)) > 0, 10000, "the read to wait on the primary");
      const promoted = pair.standbyEndpoint(CLUSTER);
      await pair.killPrimary();
      await waitFor(async () => (await topologyOf(gw, CLUSTER)).primary === null, 30000, "the gateway to report no primary");
      await pair.promoteStandby();
      const answer = await read;
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.records).toEqual([[{ longValue: 0 }]]);
      expect((await topologyOf(gw, CLUSTER)).primary).toBe(promoted);
      await pair.rejoinAsStandby();
      await settled(gw);
    }, 120000);

    it("records no failover when a session on the primary is lost while the primary still answers", async () => {
      const before = await topologyOf(gw, CLUSTER);
      const marker = `lost-session-${Date.now()}`;
      const release = await pair.lockBlocker();
      try {
        const write = gw.post("/v1/query", { sql: pair.dialect.blockedWrite(marker), timeoutMs: 30000 });
        await waitFor(async () => (await pair.sessionsWaiting(marker)) > 0, 10000, "the write to wait on the primary");
        expect(await pair.killSessionsRunning(marker)).toBe(1);
        // The write's session died with it sent: a failover sign about a primary that still answers.
        expect((await write).body.error?.code).toBe("OUTCOME_UNKNOWN");
      } finally {
        await release();
      }
      expect((await gw.post("/v1/query", { sql: pair.dialect.insert, params: [marker] })).status).toBe(200);
      await waitFor(async () => (await topologyOf(gw, CLUSTER)).endpoints.every((endpoint) => endpoint.healthy), 10000, "a check round with every endpoint healthy");
      const after = await topologyOf(gw, CLUSTER);
      expect(after.failovers.slice(before.failovers.length)).toEqual([]);
      expect(after.primary).toBe(pair.primaryEndpoint(CLUSTER));
    }, 60000);

    it("answers a batch whose own SQL ends its session once, clearly, instead of running it again until its deadline", async () => {
      const before = await topologyOf(gw, CLUSTER);
      const marker = `ends-own-session-${Date.now()}`;
      const answer = await gw.post("/v1/batch", { statements: [{ sql: pair.dialect.insert, params: [marker] }, { sql: pair.dialect.endsOwnSession }], timeoutMs: 20000 });
      // MariaDB answers KILL CONNECTION_ID() with its own error (1927, "Connection was killed");
      // PostgreSQL just ends the session, and the gateway must tell that apart from a failover.
      expect(answer.body.error?.message, JSON.stringify(answer.body)).toMatch(/statements\.1 ended its own session|Connection was killed/);
      expect(answer.body.error.retryable).toBe(false);
      expect(answer.body.error.attempts).toBeLessThanOrEqual(2);
      expect((await pair.queryPrimary<{ id: string }>(pair.dialect.ids)).map((row) => row.id)).not.toContain(marker);
      const after = await topologyOf(gw, CLUSTER);
      expect(after.failovers.slice(before.failovers.length)).toEqual([]);
    }, 60000);

    it("answers a transaction that lost its connection with CONNECTION_LOST, and later calls with why it was rolled back", async () => {
      const begun = await gw.post("/v1/transactions", {});
      const id = begun.body.transactionId as string;
      expect((await gw.post("/v1/query", { sql: pair.dialect.insert, params: ["tx-lost"], transactionId: id })).status).toBe(200);
      const marker = `lost-${Date.now()}`;
      const sleeping = gw.post("/v1/query", { sql: pair.dialect.sleep(30, marker), transactionId: id });
      await waitFor(async () => (await pair.killSessionsRunning(marker)) > 0, 10000, "the transaction's session to be killed");
      const lost = await sleeping;
      expect(lost.status).toBe(503);
      expect(lost.body.error.code).toBe("CONNECTION_LOST");
      expect(lost.body.error.message).toMatch(/run the whole transaction again/);
      for (const later of [
        () => gw.post(`/v1/transactions/${id}/commit`, undefined),
        () => gw.post("/v1/query", { sql: "select 1", transactionId: id }),
        () => gw.post(`/v1/transactions/${id}/rollback`, undefined),
      ]) {
        const answer = await later();
        expect(answer.body.error.code).toBe("TRANSACTION_ABORTED");
        expect(answer.body.error.message).toMatch(/was rolled back: it lost its connection/);
      }
      expect((await pair.queryPrimary<{ id: string }>(pair.dialect.ids)).map((row) => row.id)).not.toContain("tx-lost");
      // A caller who commits twice is told the truth the second time too.
      const committed = (await gw.post("/v1/transactions", {})).body.transactionId as string;
      expect((await gw.post(`/v1/transactions/${committed}/commit`, undefined)).status).toBe(200);
      expect((await gw.post(`/v1/transactions/${committed}/commit`, undefined)).body.error).toMatchObject({ code: "TRANSACTION_NOT_FOUND", message: expect.stringMatching(/was committed/) as unknown });
    }, 60000);

    it("refuses commits and rollbacks on both surfaces while draining, and rolls their transactions back", async () => {
      const native = (await gw.post("/v1/transactions", {})).body.transactionId as string;
      expect((await gw.post("/v1/query", { sql: pair.dialect.insert, params: ["drain-native"], transactionId: native })).status).toBe(200);
      const begun = await gw.post("/BeginTransaction", dataApi);
      const viaDataApi = begun.body.transactionId as string;
      const insert = pair.dialect.insert.replace(/\$1|\?/, ":id");
      const executed = await gw.post("/Execute", { ...dataApi, transactionId: viaDataApi, sql: insert, parameters: [{ name: "id", value: { stringValue: "drain-data-api" } }] });
      expect(executed.status).toBe(200);
      // Each request is under way (headers parsed) when the drain begins; its route answers after.
      const server = gw.gateway.http.server;
      const held = [
        holdRequest(server, gw.baseUrl, `/v1/transactions/${native}/commit`, {}),
        holdRequest(server, gw.baseUrl, `/v1/transactions/${native}/rollback`, {}),
        holdRequest(server, gw.baseUrl, "/CommitTransaction", { ...dataApi, transactionId: viaDataApi }),
        holdRequest(server, gw.baseUrl, "/RollbackTransaction", { ...dataApi, transactionId: viaDataApi }),
      ];
      await Promise.all(held.map((request) => request.arrived));
      const draining = gw.gateway.drain();
      const answers = await Promise.all(held.map((request) => request.finish()));
      await draining;
      expect(answers.map((answer) => answer.status)).toEqual([503, 503, 503, 503]);
      expect(answers.slice(0, 2).map((answer) => (answer.body as { error: { code: string } }).error.code)).toEqual(["GATEWAY_DRAINING", "GATEWAY_DRAINING"]);
      expect(answers.slice(2).map((answer) => (answer.body as { code: string }).code)).toEqual(["ServiceUnavailableError", "ServiceUnavailableError"]);
      const ids = (await pair.queryPrimary<{ id: string }>(pair.dialect.ids)).map((row) => row.id);
      expect(ids).not.toContain("drain-native");
      expect(ids).not.toContain("drain-data-api");
    }, 60000);
  });
}
