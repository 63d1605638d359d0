/**
 * The MariaDB topology harness itself (for the MySQL engine's routing and failover tests): a primary
 * and a GTID replica that replicates, is read-only, pauses replay, and takes over after a crash.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MariaDbTopology, startMariaDbTopology } from "../support/mariadb-topology.js";
import { waitFor } from "../support/wait-for.js";

let topology: MariaDbTopology;

beforeAll(async () => {
  topology = await startMariaDbTopology(1);
}, 120000);

afterAll(async () => {
  await topology?.destroy();
});

const count = async (instance: MariaDbTopology["primary"]) =>
  (await instance.query<{ n: number }>("SELECT COUNT(*) AS n FROM test.t").catch(() => [{ n: -1 }]))[0]?.n;

describe("MariaDB topology harness", () => {
  it("replicates by GTID to a read-only replica", async () => {
    const [replica] = topology.replicas as [MariaDbTopology["primary"]];
    await topology.primary.query("CREATE TABLE test.t (x INT PRIMARY KEY)");
    await topology.primary.query("INSERT INTO test.t VALUES (1)");
    await waitFor(async () => (await count(replica)) === 1, 10000, "replication");
    const [state] = await replica.query<{ ro: number; pos: string }>("SELECT @@read_only AS ro, @@gtid_slave_pos AS pos");
    expect(state?.ro).toBe(1);
    const [primaryPos] = await topology.primary.query<{ pos: string }>("SELECT @@gtid_binlog_pos AS pos");
    expect(state?.pos).toBe(primaryPos?.pos);
  });

  it("pauses and resumes replay", async () => {
    const [replica] = topology.replicas as [MariaDbTopology["primary"]];
    await replica.pauseReplay();
    await topology.primary.query("INSERT INTO test.t VALUES (2)");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await count(replica)).toBe(1);
    await replica.resumeReplay();
    await waitFor(async () => (await count(replica)) === 2, 10000, "catch-up");
  });

  it("promotes the replica after the primary crashes", async () => {
    const [replica] = topology.replicas as [MariaDbTopology["primary"]];
    await topology.primary.stop("immediate");
    await replica.promote();
    await replica.query("INSERT INTO test.t VALUES (3)");
    expect(await count(replica)).toBe(3);
  });
});
