/**
 * Aurora Serverless v2 capacity changing under load (issue 35 §3), on the Aurora PostgreSQL stand-in
 * with each instance behind a Serverless v2 stand-in (test/support/serverless-instance.ts: statements
 * slower at lower capacity, connections kept by scaling, a host move that keeps or resets them).
 * AWS: "Scaling doesn't disrupt any database operations that are underway"
 * (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/aurora-serverless-v2.how-it-works.html),
 * so nothing may fail and the gateway's sessions must outlive every change; the rare move to another
 * host is not settled by the page and is a case both ways.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuroraInstance, AuroraStandin } from "../../support/aurora-standin.js";
import { startAuroraStandin } from "../../support/aurora-standin.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { type HostMove, type ServerlessInstance, startServerlessInstance } from "../../support/serverless-instance.js";
import { failed, type LoadOutcome, underSteadyLoad } from "../../support/steady-load.js";
import { waitFor } from "../../support/wait-for.js";

const WRITE = "insert into sc_writes (port) values (inet_server_port()) returning aurora_db_instance_identifier() as server, port";
const READ = "select aurora_db_instance_identifier() as server, inet_server_port() as port from sc_writes limit 1";
const LOAD = { write: WRITE, read: READ };
const SLOW_READ_RUNNING = "select count(*)::int as n from pg_stat_activity where usename = 'aurora_app' and state = 'active' and query like 'select pg_sleep(0.5)%'";

describe("Aurora Serverless v2 capacity changes on the Aurora PostgreSQL stand-in", () => {
  let standin: AuroraStandin;
  let writer: ServerlessInstance;
  let reader: ServerlessInstance;
  let gw: TestGateway;

  /**
   * The backends of the gateway's pooled sessions on an instance, as the server knows them (not the
   * monitor's, "poolgate-monitor", which it replaces by design every topology.reresolveIntervalMs).
   */
  const sessionsOn = async (instance: AuroraInstance): Promise<Set<number>> =>
    new Set((await instance.query<{ pid: number }>("select pid from pg_stat_activity where usename = 'aurora_app' and application_name = 'poolgate'")).map((row) => row.pid));

  /** Waits, under the load, for `count` more successful requests of `kind` than there are now. */
  const moreSuccesses = async (outcomes: readonly LoadOutcome[], kind: LoadOutcome["kind"], count: number) => {
    const ok = () => outcomes.filter((o) => o.kind === kind && o.status === 200).length;
    const target = ok() + count;
    await waitFor(() => ok() >= target, 20000, `${count} more ${kind}s`);
  };

  beforeAll(async () => {
    standin = await startAuroraStandin({ readerCount: 1 });
    await standin.primary.query("create table sc_writes (id serial primary key, port int not null)");
    await standin.primary.query("insert into sc_writes (port) values (0)");
    const [replica] = standin.replicas as [AuroraInstance];
    writer = await startServerlessInstance({ targetPort: standin.primary.port });
    reader = await startServerlessInstance({ targetPort: replica.port });
    gw = await startTestGateway({
      clusters: { default: { writerUrl: writer.endpointUrl(standin.primary.url()), readerUrls: [reader.endpointUrl(replica.url())] } },
      pool: { maxSize: 4, acquireTimeoutMs: 8000 },
      topology: { checkIntervalMs: 100, checkTimeoutMs: 1000 },
    });
  }, 120000);

  afterAll(async () => {
    await gw?.stop();
    await writer?.close();
    await reader?.close();
    await standin?.destroy();
  });

  it("capacity up and down on the writer and the reader: no request fails, a transaction open across it commits, every session outlives it", async () => {
    const [replica] = standin.replicas as [AuroraInstance];
    let before: Set<number>[] = [];
    // A transaction open across every change ("scaling can happen ... while SQL transactions are in process").
    const transactionId = (await gw.post("/v1/transactions", {})).body.transactionId as string;
    const inTransaction: { status: number; pid?: number }[] = [];
    const { outcomes } = await underSteadyLoad(gw, LOAD, async (soFar) => {
      before = [await sessionsOn(standin.primary), await sessionsOn(replica)];
      for (const acu of [2, 16, 64, 4, 0.5, 8, 1]) {
        writer.scaleTo(acu);
        reader.scaleTo(acu / 2 >= 0.5 ? acu / 2 : 0.5);
        const step = await gw.post("/v1/query", { sql: "insert into sc_writes (port) values (-1) returning pg_backend_pid() as pid", transactionId });
        inTransaction.push({ status: step.status, pid: step.body?.rows?.[0]?.pid });
        await moreSuccesses(soFar, "write", 5);
        await moreSuccesses(soFar, "read", 5);
      }
    });
    expect(failed(outcomes)).toEqual([]);
    expect((await gw.post(`/v1/transactions/${transactionId}/commit`, undefined)).body.outcome).toBe("committed");
    expect(inTransaction.map((step) => step.status)).toEqual(Array(7).fill(200));
    expect(new Set(inTransaction.map((step) => step.pid)).size).toBe(1);
    expect((await standin.primary.query<{ n: number }>("select count(*)::int as n from sc_writes where port = -1"))[0]?.n).toBe(7);
    const after = [await sessionsOn(standin.primary), await sessionsOn(replica)];
    // Sessions the gateway held before the scaling are the very ones it holds after it.
    expect(before.map((pids) => pids.size).every((size) => size > 0)).toBe(true);
    for (const [i, pids] of before.entries()) expect([...pids].filter((pid) => !after[i]?.has(pid))).toEqual([]);
    expect([writer.reset, reader.reset]).toEqual([0, 0]);
    expect(new Set(outcomes.filter((o) => o.kind === "read" && o.status === 200).map((o) => o.port))).toContain(replica.port);
  });

  it.each<HostMove>(["connections-kept", "connections-reset"])(
    "a reader moved to another host while it scales (%s): no request fails, a read running there is answered, it serves reads again",
    async (move) => {
      const [replica] = standin.replicas as [AuroraInstance];
      let before = new Set<number>();
      let acceptedBefore = 0;
      let movedAt = Number.POSITIVE_INFINITY;
      let slowRead: Promise<{ status: number; body: { rows?: { port: number }[] } }> | undefined;
      const { outcomes } = await underSteadyLoad(gw, LOAD, async (soFar) => {
        before = await sessionsOn(replica);
        acceptedBefore = reader.accepted;
        // A read running on the reader when it moves: kept, it finishes there; reset, it is cut and must be answered all the same.
        slowRead = gw.post("/v1/query", { sql: "select pg_sleep(0.5) as slept, inet_server_port() as port", timeoutMs: 15000 });
        await waitFor(async () => (await replica.query<{ n: number }>(SLOW_READ_RUNNING))[0]?.n === 1, 10000, "the slow read to run on the reader");
        reader.scaleTo(32);
        reader.moveHost(move);
        movedAt = performance.now();
        await moreSuccesses(soFar, "read", 10);
        await waitFor(() => soFar.some((o) => o.kind === "read" && o.status === 200 && o.startedAt > movedAt && o.port === replica.port), 20000, "reads on the moved reader");
      });
      expect(failed(outcomes)).toEqual([]);
      const slow = await slowRead;
      expect(slow?.status, JSON.stringify(slow?.body)).toBe(200);
      const after = await sessionsOn(replica);
      expect(before.size).toBeGreaterThan(0);
      if (move === "connections-kept") {
        expect([...before].filter((pid) => !after.has(pid))).toEqual([]);
        expect(reader.reset).toBe(0);
      } else {
        // Every session was cut; the gateway opened new ones to the same instance.
        expect([...before].filter((pid) => after.has(pid))).toEqual([]);
        expect(reader.reset).toBeGreaterThan(0);
        expect(reader.accepted).toBeGreaterThan(acceptedBefore);
      }
    },
    60000,
  );
});
