/**
 * The result cache against real servers: a real redis-server shared by two gateways (two tasks), on
 * PostgreSQL and on MariaDB. The ledger runs writers and cached readers on both gateways and checks
 * every answer: none older than the caller's consistency token, none missing a write acknowledged
 * before the read began, with Valkey stopped and started again in the middle of one run. Also: one
 * principal never gets another's cached rows, and invalidations missed while Valkey was unreachable
 * (its data kept) are never served afterwards.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { runCacheLedger } from "../../support/cache-ledger.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase } from "../../support/mysql.js";
import { createTestDatabase } from "../../support/postgres.js";
import { startTrackedServer, type TrackedServer } from "../../support/tracked-server.js";
import { startTestValkey, type TestValkey } from "../../support/valkey.js";
import { waitFor } from "../../support/wait-for.js";

interface EngineUnderTest {
  name: string;
  create(): Promise<{ url: string; run(sql: string): Promise<unknown>; drop(): Promise<void> }>;
  placeholder: string;
  /** Whether the server gives writes a consistency token: the machine's MariaDB keeps no binary log (no GTID), so it gives none. */
  tokens: boolean;
}

const ENGINES: EngineUnderTest[] = [
  {
    name: "PostgreSQL",
    placeholder: "$1",
    tokens: true,
    create: async () => {
      const db = await createTestDatabase();
      return { url: db.url, run: (sql) => db.admin.query(sql), drop: () => db.drop() };
    },
  },
  {
    name: "MariaDB",
    placeholder: "?",
    tokens: false,
    create: async () => {
      const db = await createTestMysqlDatabase();
      return { url: db.url, run: (sql) => db.query(sql), drop: () => db.drop() };
    },
  },
];

const TOKENS = { alice: "alice-token-0123456789abcdef012345", bob: "bob-token-0123456789abcdef01234567" };

/** A TCP proxy to Valkey that can be cut (every connection dropped, new ones refused) and restored: Valkey unreachable, its data kept. */
async function startCuttableProxy(targetPort: number): Promise<TrackedServer & { cut(): void; restore(): void }> {
  let open = true;
  const live = new Set<net.Socket>();
  const server = await startTrackedServer((client, track) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = net.connect(targetPort, "127.0.0.1");
    track(upstream);
    for (const socket of [client, upstream]) {
      live.add(socket);
      socket.on("close", () => live.delete(socket));
      socket.on("error", () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  return {
    ...server,
    cut: () => {
      open = false;
      for (const socket of live) socket.destroy();
    },
    restore: () => {
      open = true;
    },
  };
}

describe.each(ENGINES)("result cache on $name with a shared Valkey", (engine) => {
  let db: Awaited<ReturnType<EngineUnderTest["create"]>>;
  let valkey: TestValkey;
  let proxy: Awaited<ReturnType<typeof startCuttableProxy>>;
  let tokens: TokensFile;
  let a: TestGateway;
  let b: TestGateway;
  const read = `SELECT n FROM ledger WHERE id = 1`;
  const write = `UPDATE ledger SET n = GREATEST(n, ${engine.placeholder}) WHERE id = 1`;

  const config = (url: string) => ({
    clusters: { main: { writerUrl: db.url } },
    defaultCluster: "main",
    topology: { checkIntervalMs: 100 },
    cache: { store: "valkey" as const, valkey: { url, commandTimeoutMs: 1000 } },
    auth: {
      bearer: { tokensFile: tokens.path },
      principals: { alice: { clusters: { main: "read-write" as const } }, bob: { clusters: { main: "read-write" as const } } },
    },
  });
  const asAlice = bearer(TOKENS.alice);

  beforeAll(async () => {
    db = await engine.create();
    await db.run("CREATE TABLE ledger (id int primary key, n bigint not null)");
    await db.run("INSERT INTO ledger VALUES (1, 0), (2, 0)");
    valkey = await startTestValkey();
    proxy = await startCuttableProxy(valkey.port);
    tokens = writeTokensFile(TOKENS);
    a = await startTestGateway(config(valkey.url));
    b = await startTestGateway(config(`redis://127.0.0.1:${proxy.port}`));
    // Both tasks vouch for the store once they have connected and renewed the epochs.
    for (const gateway of [a, b]) {
      await waitFor(async () => (await gateway.post("/v1/query", { sql: "SELECT 1 AS one", cache: { ttlMs: 1000 } }, asAlice)).body.cache !== "bypass", 10000, "valkey in use");
    }
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await proxy?.close();
    await valkey?.close();
    await db?.drop();
    tokens?.remove();
  });

  it("answers a repeated read from the cache on another task, and says so", async () => {
    const sql = "SELECT n FROM ledger WHERE id = 2";
    const first = await a.post("/v1/query", { sql, cache: { ttlMs: 60000 } }, asAlice);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ cache: "miss", attempts: 1 });
    const second = await b.post("/v1/query", { sql, cache: { ttlMs: 60000 } }, asAlice);
    expect(second.body).toMatchObject({ cache: "hit", attempts: 0, rows: first.body.rows });
    expect(second.headers.get("x-poolgate-cache")).toBe("hit");
    const volatile = await a.post("/v1/query", { sql: "SELECT n, now() FROM ledger WHERE id = 2", cache: { ttlMs: 60000 } }, asAlice);
    expect(volatile.body.cache).toBe("bypass");
    expect(volatile.headers.get("x-poolgate-cache")).toBe("bypass");
  });

  it("never gives principal B the rows principal A had cached", async () => {
    const sql = "SELECT n FROM ledger WHERE id = 2";
    await db.run("UPDATE ledger SET n = 100 WHERE id = 2");
    const alice = await a.post("/v1/query", { sql, cache: { ttlMs: 60000 } }, asAlice);
    // Changed outside the gateway: alice's entry keeps 100 (bounded by its TTL); bob's read is his own.
    await db.run("UPDATE ledger SET n = 200 WHERE id = 2");
    const bob = await b.post("/v1/query", { sql, cache: { ttlMs: 60000 } }, bearer(TOKENS.bob));
    expect(bob.body.cache).toBe("miss");
    expect(Number(bob.body.rows[0].n)).toBe(200);
    const aliceAgain = await b.post("/v1/query", { sql, cache: { ttlMs: 60000 } }, asAlice);
    expect(aliceAgain.body.cache).toBe("hit");
    expect(aliceAgain.body.rows).toEqual(alice.body.rows);
  });

  it("keeps a ledger of writers and cached readers on two tasks: no stale token read, no missed acknowledged write, through a Valkey outage", async () => {
    const ledger = await runCacheLedger({
      gateways: [a, b].map((gateway) => (body: object) => gateway.post("/v1/query", body, asAlice)),
      readSql: read,
      writeSql: write,
      tokens: engine.tokens,
      valkey,
      minPhaseMs: 0,
      enough: 10,
      phaseTimeoutMs: 60000,
      ttlMs: 60000,
    });
    console.info(`result-cache ledger (${engine.name}): ${JSON.stringify(ledger)}`);
    expect(ledger).toMatchObject({ failed: 0, staleTokenReads: 0, missedAckedWrites: 0, afterOutage: { staleTokenReads: 0, missedAckedWrites: 0 } });
    expect(ledger.hits).toBeGreaterThanOrEqual(20);
    expect(ledger.afterOutage.hits).toBeGreaterThanOrEqual(10);
    if (engine.tokens) expect(ledger.tokenReads).toBeGreaterThan(10);
    // Load-sensitive: the run lasts until enough hits have been seen before and after the outage.
  }, 200000);

  it("serves nothing a write made while Valkey was unreachable (its data kept) has invalidated", async () => {
    const sql = "SELECT n FROM ledger WHERE id = 1";
    await a.post("/v1/query", { sql: write, params: [5_000_000] }, asAlice);
    await b.post("/v1/query", { sql, cache: { ttlMs: 60000 } }, asAlice);
    const cached = await b.post("/v1/query", { sql, cache: { ttlMs: 60000 } }, asAlice);
    expect(cached.body).toMatchObject({ cache: "hit" });
    // b loses Valkey (its way there goes through the proxy) while the server keeps every key; a keeps it.
    proxy.cut();
    await waitFor(async () => (await b.post("/v1/query", { sql, cache: { ttlMs: 60000 } }, asAlice)).body.cache === "bypass", 10000, "b bypassing");
    // b's own write while Valkey is unreachable: acknowledged, its invalidation not confirmed.
    const written = await b.post("/v1/query", { sql: write, params: [6_000_000] }, asAlice);
    expect(written.status).toBe(200);
    proxy.restore();
    let answer = await b.post("/v1/query", { sql, cache: { ttlMs: 60000 } }, asAlice);
    await waitFor(
      async () => {
        answer = await b.post("/v1/query", { sql, cache: { ttlMs: 60000 } }, asAlice);
        expect(Number(answer.body.rows[0].n)).toBe(6_000_000);
        return answer.body.cache !== "bypass";
      },
      10000,
      "b back on the cache",
    );
    expect(answer.body.cache).toBe("miss");
    // a never lost Valkey: the entry b's write invalidated is not served there either.
    const onA = await a.post("/v1/query", { sql, cache: { ttlMs: 60000 } }, asAlice);
    expect(Number(onA.body.rows[0].n)).toBe(6_000_000);
  });
});
