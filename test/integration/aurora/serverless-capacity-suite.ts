/**
 * Aurora Serverless v2 capacity changing under load (issue 35 §3), written once for both Aurora
 * stand-ins, with each instance behind a Serverless v2 stand-in (test/support/serverless-instance.ts:
 * statements slower at lower capacity, connections kept by scaling, a host move that keeps or resets
 * them).
 * AWS: "Scaling doesn't disrupt any database operations that are underway"
 * (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/aurora-serverless-v2.how-it-works.html),
 * so nothing may fail and the gateway's sessions must outlive every change; the rare move to another
 * host is not settled by the page and is a case both ways.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { type HostMove, type ServerlessInstance, startServerlessInstance } from "../../support/serverless-instance.js";
import { failed, type LoadOutcome, underSteadyLoad } from "../../support/steady-load.js";
import { waitFor } from "../../support/wait-for.js";

/** An instance as the suite reads it: `port` is what the load's SQL answers there, `url()` the gateway's way in. */
export interface CapacityInstance {
  readonly port: number;
  url(): string;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

export interface CapacityCluster<I extends CapacityInstance> {
  primary: I;
  replicas: I[];
  destroy(): Promise<void>;
}

/** One engine's stand-in and SQL. */
export interface CapacityTarget<I extends CapacityInstance> {
  engine: string;
  /** A writer and one reader, with a table `sc_writes (id, port)` holding one row. */
  start(): Promise<CapacityCluster<I>>;
  /** A write and a read answering `server` and `port`. */
  write: string;
  read: string;
  /** An insert of port -1 into sc_writes answering `pid`, the session's backend id; their count (`n`, as an administrator). */
  insertAnsweringSession: string;
  countInserted: string;
  /** A read that sleeps 0.5 s on the server answering `port`, and the count (`n`, as an administrator) of those running. */
  slowRead: string;
  slowReadsRunning: string;
  /**
   * The ids (`pid`) of the gateway's pooled sessions as the server knows them (not the monitor's,
   * which it replaces by design every topology.reresolveIntervalMs).
   */
  poolSessions: string;
}

export function serverlessCapacitySuite<I extends CapacityInstance>(target: CapacityTarget<I>): void {
  describe(`Aurora Serverless v2 capacity changes on the Aurora ${target.engine} stand-in`, () => {
    let standin: CapacityCluster<I>;
    let writer: ServerlessInstance;
    let reader: ServerlessInstance;
    let gw: TestGateway;
    const LOAD = { write: target.write, read: target.read };

    const sessionsOn = async (instance: I): Promise<Set<number>> => new Set((await instance.query<{ pid: number }>(target.poolSessions)).map((row) => Number(row.pid)));

    /** Waits, under the load, for `count` more successful requests of `kind` than there are now. */
    const moreSuccesses = async (outcomes: readonly LoadOutcome[], kind: LoadOutcome["kind"], count: number) => {
      const ok = () => outcomes.filter((o) => o.kind === kind && o.status === 200).length;
      const goal = ok() + count;
      await waitFor(() => ok() >= goal, 20000, `${count} more ${kind}s`);
    };

    beforeAll(async () => {
      standin = await target.start();
      const [replica] = standin.replicas as [I];
      // In front of the way in the gateway would take (the stand-in's own forwarder, if it has one).
      writer = await startServerlessInstance({ targetPort: Number(new URL(standin.primary.url()).port) });
      reader = await startServerlessInstance({ targetPort: Number(new URL(replica.url()).port) });
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
      const [replica] = standin.replicas as [I];
      let before: Set<number>[] = [];
      // A transaction open across every change ("scaling can happen ... while SQL transactions are in process").
      const transactionId = (await gw.post("/v1/transactions", {})).body.transactionId as string;
      const inTransaction: { status: number; pid?: number }[] = [];
      const { outcomes } = await underSteadyLoad(gw, LOAD, async (soFar) => {
        before = [await sessionsOn(standin.primary), await sessionsOn(replica)];
        for (const acu of [2, 16, 64, 4, 0.5, 8, 1]) {
          writer.scaleTo(acu);
          reader.scaleTo(acu / 2 >= 0.5 ? acu / 2 : 0.5);
          const step = await gw.post("/v1/query", { sql: target.insertAnsweringSession, transactionId });
          inTransaction.push({ status: step.status, pid: Number(step.body?.rows?.[0]?.pid) });
          await moreSuccesses(soFar, "write", 5);
          await moreSuccesses(soFar, "read", 5);
        }
      });
      expect(failed(outcomes)).toEqual([]);
      expect((await gw.post(`/v1/transactions/${transactionId}/commit`, undefined)).body.outcome).toBe("committed");
      expect(inTransaction.map((step) => step.status)).toEqual(Array(7).fill(200));
      expect(new Set(inTransaction.map((step) => step.pid)).size).toBe(1);
      expect(Number((await standin.primary.query<{ n: number }>(target.countInserted))[0]?.n)).toBe(7);
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
        const [replica] = standin.replicas as [I];
        let before = new Set<number>();
        let acceptedBefore = 0;
        let movedAt = Number.POSITIVE_INFINITY;
        let slowRead: Promise<{ status: number; body: { rows?: { port: number }[] } }> | undefined;
        const { outcomes } = await underSteadyLoad(gw, LOAD, async (soFar) => {
          before = await sessionsOn(replica);
          acceptedBefore = reader.accepted;
          // A read running on the reader when it moves: kept, it finishes there; reset, it is cut and must be answered all the same.
          slowRead = gw.post("/v1/query", { sql: target.slowRead, timeoutMs: 15000 });
          await waitFor(async () => Number((await replica.query<{ n: number }>(target.slowReadsRunning))[0]?.n) === 1, 10000, "the slow read to run on the reader");
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
}
