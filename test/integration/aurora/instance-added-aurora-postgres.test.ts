/**
 * An instance added to the running cluster (issue 35 §3), on the Aurora PostgreSQL stand-in with its
 * instances on distinct loopback hosts sharing one port, as Aurora's do. The gateway is given the
 * writer and the instance host pattern only, so its discovery (gateway/topology/discovery.ts,
 * instance-reconciler.ts) finds the new reader in aurora_replica_status() as it would on Aurora, and
 * sends it reads once its checks reach it, while writes and reads go on and none fails.
 * AWS: the reader endpoint balances connections over the Aurora Replicas that are available
 * (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/Aurora.Endpoints.Reader.html); when a new
 * reader first appears in aurora_replica_status() is not documented, so the stand-in lists it either once
 * available or already while it starts (AddedReaderListing), and both are cases here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AddedReaderListing, AuroraInstance, AuroraStandin } from "../../support/aurora-standin.js";
import { startAuroraStandin } from "../../support/aurora-standin.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { failed, underSteadyLoad } from "../../support/steady-load.js";
import { waitFor } from "../../support/wait-for.js";

const WRITE = "insert into ia_writes (host) values (host(inet_server_addr())) returning host(inet_server_addr()) as host, inet_server_port() as port";
const READ = "select host(inet_server_addr()) as host, inet_server_port() as port";

interface EndpointStatus {
  name: string;
  role: string;
  healthy: boolean;
}

describe("a reader added to the running Aurora PostgreSQL stand-in", () => {
  let standin: AuroraStandin;
  let gw: TestGateway;

  const endpoints = async (): Promise<EndpointStatus[]> => (await gw.get("/v1/admin/topology")).body.clusters.default.endpoints;
  const endpointOf = async (instance: AuroraInstance) => (await endpoints()).find((endpoint) => endpoint.name === `default/${instance.serverId}`);

  beforeAll(async () => {
    standin = await startAuroraStandin({ readerCount: 1, distinctHosts: true });
    await standin.primary.query("create table ia_writes (id serial primary key, host text not null)");
    gw = await startTestGateway({
      clusters: {
        default: { writerUrl: standin.primary.url(), discovery: { instanceHostPattern: "127.0.0.?", refreshIntervalMs: 200 } },
      },
      pool: { maxSize: 4, acquireTimeoutMs: 8000 },
      topology: { checkIntervalMs: 100, checkTimeoutMs: 500 },
    });
    // The reader the cluster started with, found from the writer alone.
    const [reader] = standin.replicas as [AuroraInstance];
    await waitFor(async () => (await endpointOf(reader))?.healthy === true, 20000, "the first reader to be discovered");
  }, 120000);

  afterAll(async () => {
    await gw?.stop();
    await standin?.destroy();
  });

  it.each<AddedReaderListing>(["when-available", "while-starting"])(
    "listed %s: it is discovered, then serves reads, and no request fails meanwhile",
    async (listing) => {
      let added: AuroraInstance | undefined;
      let discoveredBeforeStart = false;
      const { outcomes, endedAt } = await underSteadyLoad(gw, { write: WRITE, read: READ }, async (soFar) => {
        added = await standin.addReader({
          listing,
          beforeStart: async () => {
            if (listing !== "while-starting") return;
            // The gateway knows of an instance that does not accept connections yet.
            const serverId = (await standin.primary.query<{ server_id: string }>("select server_id from aurora_standin.instances where listing = 'starting'"))[0]?.server_id;
            await waitFor(async () => (await endpoints()).some((endpoint) => endpoint.name === `default/${serverId}`), 10000, "the listed, not yet started instance to be discovered");
            discoveredBeforeStart = true;
          },
        });
        const host = added.host;
        await waitFor(() => soFar.some((o) => o.kind === "read" && o.status === 200 && o.host === host), 20000, "reads on the added reader");
      });
      const reader = added as AuroraInstance;
      expect(failed(outcomes)).toEqual([]);
      expect(discoveredBeforeStart).toBe(listing === "while-starting");
      expect(await endpointOf(reader)).toMatchObject({ role: "replica", healthy: true });
      // Reads keep going to the added reader, writes only to the writer.
      const after = outcomes.filter((o) => o.status === 200 && o.startedAt > endedAt);
      expect(new Set(after.filter((o) => o.kind === "write").map((o) => o.host))).toEqual(new Set([standin.primary.host]));
      expect(outcomes.filter((o) => o.kind === "read" && o.host === reader.host).length).toBeGreaterThan(0);
      const [row] = await reader.query<{ id: string }>("select aurora_standin.aurora_db_instance_identifier() as id");
      expect(row?.id).toBe(reader.serverId);
    },
    120000,
  );
});
