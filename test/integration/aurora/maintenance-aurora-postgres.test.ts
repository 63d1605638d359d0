/**
 * Maintenance on the Aurora PostgreSQL stand-in (issue 35 §3), under a steady load of writes and reads
 * through the gateway: a reader rebooted, a reader scaled to another instance class, the writer
 * rebooted without failover, a reader removed.
 * None may fail a request that could have run on another instance: reads never fail (another reader
 * or the writer serves them), and writes that arrive while the writer reboots are held within their
 * deadlines and run when it is back (only those in flight when it went down may fail).
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuroraStandin, startAuroraStandin } from "../../support/aurora-standin.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { waitFor } from "../../support/wait-for.js";

interface Outcome {
  kind: "write" | "read";
  startedAt: number;
  status: number;
  port?: number;
  error?: string;
}

const WRITE = "insert into mt_writes (port) values (inet_server_port()) returning inet_server_port() as port";
const READ = "select inet_server_port() as port from mt_writes limit 1";

describe("maintenance on the Aurora PostgreSQL stand-in", () => {
  let standin: AuroraStandin;
  let gw: TestGateway;

  beforeAll(async () => {
    standin = await startAuroraStandin({ readerCount: 2 });
    await standin.primary.query("create table mt_writes (id serial primary key, port int not null)");
    gw = await startTestGateway({
      clusters: { default: { writerUrl: standin.primary.url(), readerUrls: standin.replicas.map((replica) => replica.url()) } },
      pool: { maxSize: 4, acquireTimeoutMs: 8000 },
      topology: { checkIntervalMs: 100, checkTimeoutMs: 500 },
    });
  }, 120000);

  afterAll(async () => {
    await gw?.stop();
    await standin?.destroy();
  });

  /** Runs `during` under load (3 writers, 2 readers) and returns every request's outcome once 10 more writes succeeded after it. */
  async function underLoad(during: () => Promise<void>): Promise<{ outcomes: Outcome[]; endedAt: number }> {
    const outcomes: Outcome[] = [];
    let stop = false;
    const loop = async (kind: Outcome["kind"]) => {
      while (!stop) {
        const startedAt = performance.now();
        const response = await gw.post("/v1/query", { sql: kind === "write" ? WRITE : READ, timeoutMs: 15000 });
        outcomes.push(
          response.status === 200
            ? { kind, startedAt, status: 200, port: Number(response.body.rows[0]?.port) }
            : { kind, startedAt, status: response.status, error: `${response.body?.error?.code}: ${response.body?.error?.message}` },
        );
      }
    };
    const loops = [loop("write"), loop("write"), loop("write"), loop("read"), loop("read")];
    try {
      await waitFor(() => outcomes.filter((o) => o.status === 200).length >= 10, 30000, "requests before the maintenance");
      await during();
      const endedAt = performance.now();
      await waitFor(() => outcomes.filter((o) => o.kind === "write" && o.status === 200 && o.startedAt > endedAt).length >= 10, 30000, "writes after the maintenance");
      return { outcomes, endedAt };
    } finally {
      stop = true;
      await Promise.all(loops);
    }
  }

  it("a reader rebooted: no request fails, and the reader serves reads again once back", async () => {
    const [reader] = standin.replicas as [AuroraStandin["primary"]];
    const { outcomes, endedAt } = await underLoad(async () => {
      await reader.stop("fast");
      await reader.start();
    });
    expect(outcomes.filter((o) => o.status !== 200)).toEqual([]);
    await waitFor(async () => {
      const response = await gw.post("/v1/query", { sql: READ, timeoutMs: 5000 });
      return response.status === 200 && Number(response.body.rows[0]?.port) === reader.port;
    }, 20000, "the rebooted reader to serve reads again");
    expect(outcomes.some((o) => o.kind === "write" && o.startedAt > endedAt)).toBe(true);
  });

  /**
   * Modifying a provisioned instance's class restarts it with the class's memory settings (the parameter
   * group's formulas read DBInstanceClassMemory:
   * https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/USER_ParamValuesRef.html): on the
   * stand-in, a restart with other memory settings.
   */
  it("a reader scaled to another class: no request fails, and it serves reads again with its new settings", async () => {
    const [reader] = standin.replicas as [AuroraStandin["primary"]];
    const { outcomes } = await underLoad(async () => {
      await reader.stop("fast");
      appendFileSync(join(reader.dataDir, "postgresql.conf"), "shared_buffers = '48MB'\nwork_mem = '8MB'\n");
      await reader.start();
    });
    expect(outcomes.filter((o) => o.status !== 200)).toEqual([]);
    const [setting] = await reader.query<{ buffers: string }>("select current_setting('shared_buffers') as buffers");
    expect(setting?.buffers).toBe("48MB");
    await waitFor(async () => {
      const response = await gw.post("/v1/query", { sql: READ, timeoutMs: 5000 });
      return response.status === 200 && Number(response.body.rows[0]?.port) === reader.port;
    }, 20000, "the scaled reader to serve reads again");
  });

  it("the writer rebooted without failover: reads never fail, writes that arrive meanwhile are held and run on it", async () => {
    const writer = standin.primary;
    let downAt = Number.POSITIVE_INFINITY;
    const { outcomes } = await underLoad(async () => {
      await writer.stop("fast");
      downAt = performance.now();
      await writer.start();
    });
    expect(outcomes.filter((o) => o.kind === "read" && o.status !== 200)).toEqual([]);
    // Writes sent while it was down waited for it; only those in flight when it went down may fail.
    expect(outcomes.filter((o) => o.kind === "write" && o.startedAt >= downAt && o.status !== 200)).toEqual([]);
    expect(new Set(outcomes.filter((o) => o.kind === "write" && o.status === 200).map((o) => o.port))).toEqual(new Set([writer.port]));
  });

  it("a reader removed: no request fails, reads go to the instances left", async () => {
    const [, removed] = standin.replicas as [AuroraStandin["primary"], AuroraStandin["primary"]];
    let goneAt = Number.POSITIVE_INFINITY;
    const { outcomes } = await underLoad(async () => {
      await removed.stop("fast");
      goneAt = performance.now();
    });
    expect(outcomes.filter((o) => o.status !== 200)).toEqual([]);
    expect(outcomes.filter((o) => o.kind === "read" && o.startedAt > goneAt && o.port === removed.port)).toEqual([]);
  });
});
