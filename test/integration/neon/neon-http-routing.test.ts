/**
 * Neon's door on a real PostgreSQL primary and streaming replica (test/support/pg-topology.ts), with
 * the unmodified neon() driver: reads go to the replica and writes and transactions to the primary,
 * as on the native surface; a write's consistency token (in its answer's header) makes a read wait
 * for, or go around, a replica that has not replayed it; an Idempotency-Key header makes a write
 * happen once. Where each statement ran is read back from inet_server_port().
 */
import { neon, neonConfig } from "@neondatabase/serverless";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { type PgInstance, type PgTopology, startTopology } from "../../support/pg-topology.js";
import { waitFor } from "../../support/wait-for.js";

describe("Neon's door on a primary and a streaming replica", () => {
  let topology: PgTopology;
  let primary: PgInstance;
  let replica: PgInstance;
  let gateway: TestGateway;
  const CONNECTION = "postgresql://anyone@gateway.example/default";
  const sql = () => neon(CONNECTION);
  const port = async (): Promise<number> => Number(((await sql()`select inet_server_port() as port`)[0] as { port: number }).port);
  /** A request as the driver sends it, plus Poolgate's own headers; the answer's status, headers and body. */
  const post = async (body: unknown, headers: Record<string, string> = {}) => {
    const answer = await fetch(`${gateway.baseUrl}/sql`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "Neon-Connection-String": CONNECTION, "Neon-Raw-Text-Output": "true", "Neon-Array-Mode": "true", ...headers },
    });
    return { status: answer.status, headers: answer.headers, body: (await answer.json()) as { rows: string[][] } };
  };

  beforeAll(async () => {
    topology = await startTopology(1);
    [primary, replica] = topology.all() as [PgInstance, PgInstance];
    await primary.query("create table hits (id serial primary key, port int not null, note text)");
    gateway = await startTestGateway({
      clusters: { default: { writerUrl: primary.url(), readerUrls: [replica.url()] } },
      pool: { maxSize: 3, acquireTimeoutMs: 3000 },
      topology: { checkIntervalMs: 100, checkTimeoutMs: 500 },
      routing: { maxReplicaLagMs: 400, tokenWaitMs: 50 },
    });
    neonConfig.fetchEndpoint = `${gateway.baseUrl}/sql`;
    // The monitor has seen the replica caught up (on a loaded machine, after the first reads): reads may go there.
    await waitFor(async () => (await port()) === replica.port, 20000, "a read on the replica");
  }, 120000);

  afterAll(async () => {
    await gateway?.stop();
    await topology?.destroy();
  });

  it("sends reads to the replica, and writes and transactions to the primary", async () => {
    for (let i = 0; i < 5; i++) expect(await port()).toBe(replica.port);
    const query = sql();
    const [written] = await query`insert into hits (port, note) values (inet_server_port(), 'w') returning port`;
    expect(written).toEqual({ port: primary.port });
    const inBatch = await query.transaction([query`select inet_server_port() as port`]);
    expect(inBatch).toEqual([[{ port: primary.port }]]);
  });

  it("makes a read after a write see it, through the token header, while the replica lags", async () => {
    await replica.pauseReplay();
    try {
      const write = await post({ query: "insert into hits (port, note) values (inet_server_port(), $1) returning id", params: ["token"] });
      const token = write.headers.get("x-poolgate-consistency-token");
      expect(token).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      const id = write.body.rows[0]?.[0] ?? "";
      const count = (headers: Record<string, string> = {}) => post({ query: "select count(*), inet_server_port() from hits where id = $1", params: [id] }, headers);
      expect((await count({ "x-poolgate-consistency-token": token ?? "" })).body.rows).toEqual([["1", String(primary.port)]]);
      expect((await count()).body.rows).toEqual([["0", String(replica.port)]]);
    } finally {
      await replica.resumeReplay();
    }
  });

  it("applies a write sent twice with one Idempotency-Key once, and answers the second from the record", async () => {
    const request = { query: "insert into hits (port, note) values (inet_server_port(), 'keyed') returning note" };
    const first = await post(request, { "idempotency-key": "neon-keyed-1" });
    const second = await post(request, { "idempotency-key": "neon-keyed-1" });
    expect(first.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(first.headers.get("x-poolgate-idempotent-replay")).toBeNull();
    expect(second.headers.get("x-poolgate-idempotent-replay")).toBe("true");
    const rows = await primary.query<{ n: string }>("select count(*) as n from hits where note = 'keyed'");
    expect(rows[0]?.n).toBe("1");
  });
});
