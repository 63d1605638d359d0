/**
 * PlanetScale's door on a real MariaDB primary and GTID replica (test/support/mariadb-topology.ts),
 * with the unmodified driver: reads go to the replica and writes and transactions to the primary, as
 * on the native surface; a write's consistency token comes back in a header and in the session, so a
 * read on the same connection waits for, or goes around, a replica that has not applied the write.
 * Where each statement ran is read back from @@port.
 */
import { connect } from "@planetscale/database";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { type MariaDbInstance, type MariaDbTopology, startMariaDbTopology } from "../../support/mariadb-topology.js";
import { waitFor } from "../../support/wait-for.js";

const EXECUTE = "/psdb.v1alpha1.Database/Execute";

describe("PlanetScale's door on a MariaDB primary and a GTID replica", () => {
  let topology: MariaDbTopology;
  let primary: MariaDbInstance;
  let replica: MariaDbInstance;
  let gateway: TestGateway;
  // Authentication off (loopback): the username still names the cluster.
  const url = () => gateway.baseUrl.replace("//", "//anyone%40default:unused@");
  const portOf = (rows: unknown[]): number => Number((rows[0] as { port: number | string }).port);

  beforeAll(async () => {
    topology = await startMariaDbTopology(1);
    [primary, replica] = topology.all() as [MariaDbInstance, MariaDbInstance];
    await primary.query("CREATE TABLE test.hits (id INT AUTO_INCREMENT PRIMARY KEY, port INT NOT NULL, note VARCHAR(40))");
    gateway = await startTestGateway({
      clusters: { default: { writerUrl: primary.url("test"), readerUrls: [replica.url("test")] } },
      pool: { maxSize: 3, acquireTimeoutMs: 3000 },
      topology: { checkIntervalMs: 100, checkTimeoutMs: 500 },
      routing: { maxReplicaLagMs: 400, tokenWaitMs: 50 },
    });
    // The monitor has seen the replica caught up: reads may go there.
    await waitFor(async () => portOf((await connect({ url: url() }).execute("SELECT @@port AS port")).rows) === replica.port, 20000, "a read on the replica");
  }, 120000);

  afterAll(async () => {
    await gateway?.stop();
    await topology?.destroy();
  });

  it("sends reads to the replica, and writes and transactions to the primary", async () => {
    const conn = connect({ url: url() });
    for (let i = 0; i < 5; i++) expect(portOf((await connect({ url: url() }).execute("SELECT @@port AS port")).rows)).toBe(replica.port);
    await conn.execute("INSERT INTO hits (port, note) VALUES (@@port, 'w')");
    expect(await primary.query("SELECT port FROM test.hits WHERE note = 'w'")).toEqual([{ port: primary.port }]);
    const inTransaction = await connect({ url: url() }).transaction(async (tx) => (await tx.execute("SELECT @@port AS port")).rows);
    expect(portOf(inTransaction)).toBe(primary.port);
  });

  it("makes a read on the same connection see its write, through the session's token, while the replica lags", async () => {
    await replica.pauseReplay();
    try {
      const conn = connect({ url: url() });
      const written = await conn.execute("INSERT INTO hits (port, note) VALUES (@@port, 'token')");
      const count = "SELECT COUNT(*) AS n, @@port AS port FROM hits WHERE id = ?";
      // The connection carries the session, and with it the write's token: the primary answers.
      const mine = await conn.execute(count, [written.insertId]);
      expect(mine.rows).toEqual([{ n: "1", port: String(primary.port) }]);
      // A new connection carries no session: the lagging replica answers, without the row.
      const fresh = await connect({ url: url() }).execute(count, [written.insertId]);
      expect(fresh.rows).toEqual([{ n: "0", port: String(replica.port) }]);
    } finally {
      await replica.resumeReplay();
    }
  });

  it("answers a write's token in the x-poolgate-consistency-token header and in the session", async () => {
    const answer = await fetch(`${gateway.baseUrl}${EXECUTE}`, {
      method: "POST",
      body: JSON.stringify({ query: "INSERT INTO hits (port, note) VALUES (@@port, 'header')", session: null }),
      headers: { authorization: `Basic ${Buffer.from("anyone@default:unused").toString("base64")}`, "content-type": "application/json" },
    });
    const body = (await answer.json()) as { session: { consistencyToken?: string } };
    const token = answer.headers.get("x-poolgate-consistency-token");
    expect(token).toMatch(/^\d+-\d+-\d+$/);
    expect(body.session.consistencyToken).toBe(token);
  });
});
