/**
 * An instance added to the running cluster (issue 35 §3), written once for both Aurora stand-ins with
 * their instances on distinct loopback hosts sharing one port, as Aurora's are. The gateway is given the
 * writer and the instance host pattern only, so its discovery (gateway/topology/discovery.ts,
 * instance-reconciler.ts) finds the new reader in the cluster's own list (aurora_replica_status(),
 * replica_host_status) as it would on Aurora, and sends it reads once its checks reach it, while writes
 * and reads go on and none fails.
 * AWS: the reader endpoint balances connections over the Aurora Replicas that are available
 * (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/Aurora.Endpoints.Reader.html); when a new
 * reader first appears in the list is not documented, so the stand-ins list it either once available or
 * already while it starts (AddedReaderListing), and both are cases here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AddedReaderListing, AddReaderOptions } from "../../support/aurora-standin.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { failed, underSteadyLoad } from "../../support/steady-load.js";
import { waitFor } from "../../support/wait-for.js";

/** What the suite needs of an instance: its Aurora server id and the gateway's URL of it. */
export interface ListedInstance {
  readonly serverId: string;
  url(): string;
}

export interface GrowingCluster<I extends ListedInstance> {
  primary: I;
  replicas: I[];
  addReader(options?: AddReaderOptions): Promise<I>;
  destroy(): Promise<void>;
}

export interface InstanceAddedTarget<I extends ListedInstance> {
  engine: string;
  /** A writer and one reader on distinct hosts, server id = the address's last number, with the table `ia_writes` created. */
  start(): Promise<GrowingCluster<I>>;
  /** A write and a read answering `server` (the instance's server id) and `port`. */
  write: string;
  read: string;
}

interface EndpointStatus {
  name: string;
  role: string;
  healthy: boolean;
}

export function instanceAddedSuite<I extends ListedInstance>(target: InstanceAddedTarget<I>): void {
  describe(`a reader added to the running Aurora ${target.engine} stand-in`, () => {
    let cluster: GrowingCluster<I>;
    let gw: TestGateway;

    const endpoints = async (): Promise<EndpointStatus[]> => (await gw.get("/v1/admin/topology")).body.clusters.default.endpoints;
    const endpointOf = async (instance: I) => (await endpoints()).find((endpoint) => endpoint.name === `default/${instance.serverId}`);

    beforeAll(async () => {
      cluster = await target.start();
      gw = await startTestGateway({
        clusters: { default: { writerUrl: cluster.primary.url(), discovery: { instanceHostPattern: "127.0.0.?", refreshIntervalMs: 200 } } },
        pool: { maxSize: 4, acquireTimeoutMs: 8000 },
        topology: { checkIntervalMs: 100, checkTimeoutMs: 500 },
      });
      // The reader the cluster started with, found from the writer alone.
      const [reader] = cluster.replicas as [I];
      await waitFor(async () => (await endpointOf(reader))?.healthy === true, 20000, "the first reader to be discovered");
    }, 180000);

    afterAll(async () => {
      await gw?.stop();
      await cluster?.destroy();
    });

    it.each<AddedReaderListing>(["when-available", "while-starting"])(
      "listed %s: it is discovered, then serves reads, and no request fails meanwhile",
      async (listing) => {
        let added: I | undefined;
        let discoveredBeforeAvailable = false;
        const { outcomes, endedAt } = await underSteadyLoad(gw, { write: target.write, read: target.read }, async (soFar) => {
          const known = new Set((await endpoints()).map((endpoint) => endpoint.name));
          added = await cluster.addReader({
            listing,
            beforeStart: async () => {
              if (listing !== "while-starting") return;
              // The gateway knows of an instance that does not accept connections yet.
              await waitFor(async () => (await endpoints()).some((endpoint) => !known.has(endpoint.name)), 10000, "the listed, not yet available instance to be discovered");
              discoveredBeforeAvailable = true;
            },
          });
          const serverId = added.serverId;
          await waitFor(() => soFar.some((o) => o.kind === "read" && o.status === 200 && o.server === serverId), 20000, "reads on the added reader");
        });
        const reader = added as I;
        expect(failed(outcomes)).toEqual([]);
        expect(discoveredBeforeAvailable).toBe(listing === "while-starting");
        expect(await endpointOf(reader)).toMatchObject({ role: "replica", healthy: true });
        // Writes stay on the writer; the added reader got reads.
        const writesAfter = outcomes.filter((o) => o.kind === "write" && o.status === 200 && o.startedAt > endedAt);
        expect(new Set(writesAfter.map((o) => o.server))).toEqual(new Set([cluster.primary.serverId]));
        expect(outcomes.filter((o) => o.kind === "read" && o.server === reader.serverId).length).toBeGreaterThan(0);
      },
      120000,
    );
  });
}
