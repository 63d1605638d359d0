/**
 * Fair share between principals on the real local PostgreSQL: a greedy caller keeping 200 requests
 * in flight does not starve a second caller (waiters are served round-robin across principals, not
 * only in arrival order), and a principal's maxPoolShare caps the connections it holds at once.
 * Latencies are compared with each other, not with wall-clock targets, so the test holds on a slow
 * or shared machine.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../gateway/clusters/cluster.js";
import { bearer, type TokensFile, writeTokensFile } from "../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres.js";

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

  it("serves a second caller promptly while a greedy one keeps 200 requests waiting", async () => {
    const sql = "select pg_sleep(0.01)";
    const greedyLatencies: number[] = [];
    let stop = false;
    let greedyFailures = 0;
    const greedyLoop = async () => {
      while (!stop) {
        const started = performance.now();
        const answer = await gateway.post("/v1/query", { sql }, as("greedy"));
        if (answer.status !== 200) greedyFailures++;
        greedyLatencies.push(performance.now() - started);
      }
    };
    const greedy = Array.from({ length: 200 }, () => greedyLoop());
    // Until the greedy caller's queue is deep, measuring the other caller proves nothing.
    const deadline = Date.now() + 10000;
    while (cluster.poolOf(cluster.writer).stats().waiting < 150 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(cluster.poolOf(cluster.writer).stats().waiting).toBeGreaterThanOrEqual(150);

    const politeLatencies: number[] = [];
    for (let i = 0; i < 40; i++) {
      const started = performance.now();
      const answer = await gateway.post("/v1/query", { sql }, as("polite"));
      expect(answer.status).toBe(200);
      politeLatencies.push(performance.now() - started);
    }
    stop = true;
    await Promise.all(greedy);

    const greedySorted = [...greedyLatencies].sort((a, b) => a - b);
    const politeSorted = [...politeLatencies].sort((a, b) => a - b);
    const report = {
      greedy: { n: greedySorted.length, p50: percentile(greedySorted, 50), p99: percentile(greedySorted, 99) },
      polite: { n: politeSorted.length, p50: percentile(politeSorted, 50), p99: percentile(politeSorted, 99) },
    };
    console.info(`fair share, ms: ${JSON.stringify(report, (_key, value: unknown) => (typeof value === "number" ? Math.round(value * 10) / 10 : value))}`);
    expect(greedyFailures).toBe(0);
    // Served in arrival order the polite caller would wait as long as a greedy request (~50 statement
    // times); served in turn it waits for about one statement. A factor of 3 leaves room for noise.
    expect(report.polite.p99).toBeLessThan(report.greedy.p50 / 3);
    expect(cluster.poolOf(cluster.writer).stats()).toMatchObject({ active: 0, waiting: 0 });
  });

  it("caps the connections one principal holds at its maxPoolShare, leaving the rest to others", async () => {
    let hogDone = 0;
    const hog = Array.from({ length: 6 }, () =>
      gateway.post("/v1/query", { sql: "select pg_sleep(0.6)" }, as("hog")).then((answer) => {
        hogDone++;
        return answer;
      }),
    );
    const deadline = Date.now() + 5000;
    while ((cluster.poolOf(cluster.writer).inUseByTenant().get("hog") ?? 0) < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(cluster.poolOf(cluster.writer).inUseByTenant().get("hog")).toBe(2);
    const { rows } = await db.admin.query<{ n: string }>("select count(*) as n from pg_stat_activity where datname = current_database() and query like '%pg_sleep(0.6)%' and state = 'active' and pid <> pg_backend_pid()");
    expect(Number(rows[0]?.n)).toBe(2);
    expect(cluster.poolOf(cluster.writer).stats()).toMatchObject({ waiting: 4, idle: 2 });

    const other = await gateway.post("/v1/query", { sql: "select 1 as one" }, as("polite"));
    expect(other.status).toBe(200);
    // Not behind the hog's 0.6 s statements: it got one of the connections the hog may not take.
    expect(hogDone).toBe(0);

    expect((await Promise.all(hog)).map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(cluster.poolOf(cluster.writer).inUseByTenant().get("hog")).toBeUndefined();
  });
});
