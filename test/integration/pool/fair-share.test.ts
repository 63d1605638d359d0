/**
 * Fair share between principals on the real local PostgreSQL: a greedy caller keeping 200 requests
 * in flight does not starve a second caller (waiters are served round-robin across principals, not
 * only in arrival order), and a principal's maxPoolShare caps the connections it holds at once.
 * Fairness is read from order and counts (how many greedy requests were answered while a polite one
 * was in flight), never from wall time, so the test holds on a slow or shared machine.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../../gateway/clusters/cluster.js";
import { bearer, type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";
import { waitFor } from "../../support/wait-for.js";

const TOKENS = { greedy: "greedy-token-0123456789abcdef01234", polite: "polite-token-0123456789abcdef01234", hog: "hog-token-0123456789abcdef0123456" };
const as = (principal: keyof typeof TOKENS) => bearer(TOKENS[principal]);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

describe("fair share between principals", () => {
  let db: TestDatabase;
  let gateway: TestGateway;
  let tokens: TokensFile;
  let cluster: Cluster;

  beforeAll(async () => {
    db = await createTestDatabase();
    tokens = writeTokensFile(TOKENS);
    gateway = await startTestGateway({
      clusters: { default: { writerUrl: db.url } },
      pool: { maxSize: 4, acquireTimeoutMs: 60000 },
      auth: {
        bearer: { tokensFile: tokens.path },
        principals: {
          greedy: { clusters: { default: "read-write" } },
          polite: { clusters: { default: "read-write" } },
          hog: { clusters: { default: "read-write" }, maxPoolShare: 0.5 },
        },
      },
    });
    cluster = gateway.gateway.clusters.get("default") as Cluster;
  });

  afterAll(async () => {
    await gateway?.stop();
    await db?.drop();
    tokens?.remove();
  });

  it("serves a second caller in turn while a greedy one keeps 200 requests waiting", async () => {
    const sql = "select pg_sleep(0.01)";
    let stop = false;
    let greedyFailures = 0;
    /** Greedy requests answered so far: the clock this test reads, in place of wall time. */
    let greedyAnswered = 0;
    const greedyLoop = async () => {
      while (!stop) {
        const answer = await gateway.post("/v1/query", { sql }, as("greedy"));
        if (answer.status !== 200) greedyFailures++;
        greedyAnswered++;
      }
    };
    const greedy = Array.from({ length: 200 }, () => greedyLoop());
    // Until the greedy caller's queue is deep, measuring the other caller proves nothing.
    const pool = cluster.poolOf(cluster.writer);
    await waitFor(() => pool.stats().waiting >= 150, 10000, "150 greedy requests waiting");

    /** For each polite request: greedy requests waiting when it was sent, and answered while it was in flight. */
    const samples: { queued: number; overtakenBy: number }[] = [];
    for (let i = 0; i < 40; i++) {
      const before = greedyAnswered;
      const queued = pool.stats().waiting;
      const answer = await gateway.post("/v1/query", { sql }, as("polite"));
      expect(answer.status).toBe(200);
      samples.push({ queued, overtakenBy: greedyAnswered - before });
    }
    stop = true;
    await Promise.all(greedy);

    const overtaken = samples.map((sample) => sample.overtakenBy).sort((a, b) => a - b);
    console.info(`fair share: greedy requests answered while a polite one was in flight: p50 ${percentile(overtaken, 50)}, max ${overtaken.at(-1)}; queued when sent: min ${Math.min(...samples.map((sample) => sample.queued))}`);
    expect(greedyFailures).toBe(0);
    // Served in arrival order the polite caller would wait until every greedy request queued before it
    // was answered; served in turn it waits for about one statement per connection. A third of the
    // queue leaves room for the greedy statements the other connections finish meanwhile.
    expect(samples.filter((sample) => sample.overtakenBy >= sample.queued / 3)).toEqual([]);
    // The last sessions back release the session-level locks their statements may have taken first.
    await waitFor(() => pool.stats().active === 0, 5000, "every session back in the pool");
    expect(pool.stats()).toMatchObject({ active: 0, waiting: 0 });
  });

  it("caps the connections one principal holds at its maxPoolShare, leaving the rest to others", async () => {
    let hogDone = 0;
    const hog = Array.from({ length: 6 }, () =>
      gateway.post("/v1/query", { sql: "select pg_sleep(1.5)" }, as("hog")).then((answer) => {
        hogDone++;
        return answer;
      }),
    );
    // Every one of the six has reached the pool: two hold a connection, four wait although two are idle.
    const pool = cluster.poolOf(cluster.writer);
    await waitFor(() => pool.stats().waiting === 4, 10000, "the hog's other four requests to wait");
    expect(pool.inUseByTenant().get("hog")).toBe(2);
    const running = async () =>
      Number((await db.admin.query<{ n: string }>("select count(*) as n from pg_stat_activity where datname = current_database() and query like '%pg_sleep(1.5)%' and state = 'active' and pid <> pg_backend_pid()")).rows[0]?.n);
    await waitFor(async () => (await running()) > 0, 10000, "the hog's statements to run");
    expect(await running()).toBe(2);
    expect(cluster.poolOf(cluster.writer).stats()).toMatchObject({ waiting: 4, idle: 2 });

    const other = await gateway.post("/v1/query", { sql: "select 1 as one" }, as("polite"));
    expect(other.status).toBe(200);
    // Not behind the hog's 1.5 s statements: it got one of the connections the hog may not take.
    expect(hogDone).toBe(0);

    expect((await Promise.all(hog)).map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(cluster.poolOf(cluster.writer).inUseByTenant().get("hog")).toBeUndefined();
  });
});
