/**
 * A database that may pause (Aurora Serverless v2 at 0 ACUs), written once and run on each engine:
 * with clusters.<name>.idleToZero the gateway releases every session when quiet so that the stand-in
 * (test/support/pausing-instance.ts) pauses; /healthz and the status page say idle, not down; the
 * first requests after the pause are held while it resumes and served in arrival order; a caller
 * whose deadline is shorter than the resume is told DATABASE_RESUMING with Retry-After. Both answers
 * of a paused instance to a connection attempt (held until resumed, refused) are covered.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { type PausedConnectBehaviour, startPausingInstance, type PausingInstance } from "../../support/pausing-instance.js";
import { waitFor } from "../../support/wait-for.js";

export interface IdleToZeroTarget {
  name: string;
  /** A database of the file's own: its URL, SQL run directly on it, and its removal. */
  createDatabase(): Promise<{ url: string; run(sql: string): Promise<unknown>; drop(): Promise<void> }>;
  /** Creates `i35_pause_arrivals (id auto-numbered, n int)`. */
  createArrivals: string;
}

/** A POST on a connection of its own: concurrent requests never queue behind one another in the client. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON shapes
function postAlone(baseUrl: string, path: string, body: unknown): Promise<{ status: number; retryAfter: string | undefined; body: any }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(new URL(path, baseUrl), { method: "POST", agent: false, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text) } });
    request.on("response", (response) => {
      let received = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (received += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, retryAfter: response.headers["retry-after"], body: received.length > 0 ? JSON.parse(received) : undefined }));
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(text);
  });
}

/** Long enough that a caller with a 300 ms deadline cannot see the resume end, even on a loaded machine. */
const RESUME_MS = 3000;

export function defineIdleToZeroSuite(target: IdleToZeroTarget): void {
  for (const whilePaused of ["hold", "refuse"] as PausedConnectBehaviour[]) {
    describe(`idle to zero on ${target.name}, connection attempts to a paused instance ${whilePaused === "hold" ? "held" : "refused"}`, () => {
      let database: Awaited<ReturnType<IdleToZeroTarget["createDatabase"]>>;
      let instance: PausingInstance;
      let gw: TestGateway;

      const cluster = () => {
        const found = gw.gateway.clusters.get("default");
        if (!found) throw new Error("no cluster default");
        return found;
      };
      const writerPool = () => cluster().poolOf(cluster().writer);
      const health = async () => (await gw.get("/healthz")).body.clusters.default;
      const arrive = (n: number, timeoutMs: number) => postAlone(gw.baseUrl, "/v1/query", { sql: `insert into i35_pause_arrivals (n) values (${n}) returning id`, timeoutMs });
      /** Sends a request and returns once the gateway holds it (the writer pool has one more waiter), with its answer to come. */
      const held = async (n: number, timeoutMs: number): Promise<{ answer: ReturnType<typeof arrive> }> => {
        const before = writerPool().stats().waiting;
        const answer = arrive(n, timeoutMs);
        await waitFor(() => writerPool().stats().waiting === before + 1, 10000, `request ${n} to be held`);
        return { answer };
      };

      beforeAll(async () => {
        database = await target.createDatabase();
        await database.run(target.createArrivals);
        instance = await startPausingInstance({ targetPort: Number(new URL(database.url).port), pauseAfterMs: 1500, resumeMs: RESUME_MS, whilePaused });
        gw = await startTestGateway({
          clusters: { default: { writerUrl: instance.endpointUrl(database.url), idleToZero: { quietMs: 300, resumeTimeoutMs: 20000 } } },
          pool: { maxSize: 1, housekeepingIntervalMs: 100 },
          topology: { checkIntervalMs: 100, checkTimeoutMs: 1000 },
        });
      }, 60000);

      afterAll(async () => {
        await gw?.stop();
        await instance?.close();
        await database?.drop();
      });

      it("releases every session when quiet, so the instance pauses, and says idle rather than down", async () => {
        const answer = await gw.post("/v1/query", { sql: "select 1 as one" });
        expect(answer.status).toBe(200);
        await waitFor(() => instance.state === "paused", 15000, "the stand-in to pause");
        expect(instance.open).toBe(0);
        const idle = await health();
        expect(idle.idle.state).toBe("idle");
        expect(idle.database.status).toBe("idle");
        expect(idle.pool.total).toBe(0);
        const status = (await gw.get("/v1/admin/status")).body.clusters.default;
        expect(status.idle.state).toBe("idle");
      });

      it("holds the first requests while the database resumes and serves them in arrival order; a shorter deadline gets DATABASE_RESUMING", async () => {
        await waitFor(() => instance.state === "paused", 15000, "the stand-in to pause");
        const first = await held(1, 20000);
        expect(cluster().health().idle?.state).toBe("resuming");
        expect(cluster().health().database.status).toBe("resuming");

        const short = await postAlone(gw.baseUrl, "/v1/query", { sql: "select 1 as one", timeoutMs: 300 });
        expect(short.status).toBe(503);
        expect(short.body.error.code).toBe("DATABASE_RESUMING");
        expect(short.body.error.retryable).toBe(true);
        expect(Number(short.retryAfter)).toBeGreaterThanOrEqual(1);

        const second = await held(2, 20000);
        const third = await held(3, 20000);
        const answers = await Promise.all([first.answer, second.answer, third.answer]);
        expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
        const ids = answers.map((answer) => Number(answer.body.rows[0].id));
        expect([...ids].sort((a, b) => a - b)).toEqual(ids);

        expect(instance.resumes).toBeGreaterThanOrEqual(1);
        if (whilePaused === "hold") expect(instance.held).toBeGreaterThanOrEqual(1);
        else expect(instance.refused).toBeGreaterThanOrEqual(1);
        const after = await health();
        expect(after.idle.state).toBe("active");
        expect(after.idle.lastResumeMs).not.toBeNull();
        // The monitor checks again after the resume: the writer is known and healthy.
        await waitFor(async () => (await health()).endpoints[0].healthy === true, 10000, "the monitor to check the writer again");
        expect((await health()).primary).toBe("default/writer");
      });

      it("pauses again after the next quiet period", async () => {
        const pausesBefore = instance.pauses;
        await waitFor(() => instance.pauses > pausesBefore, 15000, "the stand-in to pause again");
        expect(instance.open).toBe(0);
        expect((await health()).idle.state).toBe("idle");
      });
    });
  }
}
