/**
 * The read-scaling part of `npm run bench`: point selects through the gateway with 0, 1 and 2
 * replicas, on a real primary and two streaming replicas from the machine's PostgreSQL binaries
 * (test/support/pg-topology). Failovers are failover-bench.ts's.
 */
import { Pool } from "undici";
import { type PgInstance, startTopology } from "../test/support/pg-topology.js";
import { estimate } from "./estimates.js";
import { onCleanup, type Server, startGateway } from "./processes.js";
import type { ReadScalingRow } from "./results.js";
import { SEED_ROWS, summarise } from "./workload.js";

type Step = <T>(label: string, estimateS: number, work: () => Promise<T>) => Promise<T>;

function gatewayOn(writer: PgInstance, readers: PgInstance[], poolSize: number): Promise<Server> {
  return startGateway({
    clusters: { default: { writerUrl: writer.url(), readerUrls: readers.map((r) => r.url()) } },
    pool: { maxSize: poolSize },
    topology: { checkIntervalMs: 200, checkTimeoutMs: 500 },
  });
}

/** A topology that is destroyed at exit (or Ctrl-C) unless the caller destroys it first. */
async function topologyWith(replicas: number, options: Parameters<typeof startTopology>[1] = {}) {
  const topology = await startTopology(replicas, options);
  const deregister = onCleanup(() => topology.destroy());
  return {
    topology,
    destroy: async () => {
      deregister();
      await topology.destroy();
    },
  };
}

async function post(http: Pool, body: unknown): Promise<{ status: number; body: { rows?: { id?: number }[]; error?: { code: string } } }> {
  const response = await http.request({ method: "POST", path: "/v1/query", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.statusCode, body: (await response.body.json()) as { rows?: { id?: number }[]; error?: { code: string } } };
}

async function readThroughput(gateway: Server, callers: number, durationMs: number): Promise<Omit<ReadScalingRow, "replicas">> {
  const http = new Pool(gateway.url, { connections: callers });
  const warmupEnd = Date.now() + 1000;
  const latencies: number[] = [];
  let errors = 0;
  const loop = async (until: number, record: boolean) => {
    while (Date.now() < until) {
      const id = 1 + Math.floor(Math.random() * SEED_ROWS);
      const started = performance.now();
      const response = await post(http, { sql: "SELECT id, name, balance FROM accounts WHERE id = $1", params: [id] });
      if (!record) continue;
      if (response.status === 200) latencies.push(performance.now() - started);
      else errors++;
    }
  };
  await Promise.all(Array.from({ length: callers }, () => loop(warmupEnd, false)));
  const started = performance.now();
  const end = Date.now() + durationMs;
  await Promise.all(Array.from({ length: callers }, () => loop(end, true)));
  const summary = summarise(latencies, performance.now() - started);
  await http.close();
  return { throughput: summary.throughput, p99: summary.p99, errors };
}

/**
 * Report 3: point selects through the gateway with 0, 1 and 2 streaming replicas behind it, the three
 * interleaved over `rounds` (a fresh gateway each run), keeping each one's median round.
 */
export async function runReadScaling(callers: number, durationMs: number, poolSize: number, rounds: number, step: Step): Promise<ReadScalingRow[]> {
  const { topology, destroy } = await step("starting a primary and 2 streaming replicas", estimate.topologyStartS(), () => topologyWith(2));
  try {
    const [primary, replica1, replica2] = topology.all() as [PgInstance, PgInstance, PgInstance];
    await primary.query("create table accounts (id int primary key, name text not null, balance int not null)");
    await primary.query(`insert into accounts select g, 'account-' || g, g * 10 from generate_series(1, ${SEED_ROWS}) g`);
    await primary.query("analyze accounts");
    await waitForReplicas(primary, [replica1, replica2]);
    const setups = [[], [replica1], [replica1, replica2]];
    const runs: Omit<ReadScalingRow, "replicas">[][] = setups.map(() => []);
    for (let round = 1; round <= rounds; round++) {
      for (const [i, readers] of setups.entries()) {
        await step(`round ${round}/${rounds} · ${readers.length} replica(s)`, estimate.readScalingRunS(durationMs), async () => {
          const gateway = await gatewayOn(primary, readers, poolSize);
          try {
            runs[i]?.push(await readThroughput(gateway, callers, durationMs));
          } finally {
            await gateway.stop();
          }
        });
      }
    }
    return runs.map((results, replicas) => {
      const sorted = [...results].sort((a, b) => a.throughput - b.throughput);
      const middle = sorted[Math.floor((sorted.length - 1) / 2)] as Omit<ReadScalingRow, "replicas">;
      return { ...middle, replicas, errors: results.reduce((sum, r) => sum + r.errors, 0) };
    });
  } finally {
    await destroy();
  }
}

/** Waits (with a deadline) until every replica has replayed the seed. */
async function waitForReplicas(primary: PgInstance, replicas: PgInstance[]): Promise<void> {
  const [{ lsn } = { lsn: "" }] = await primary.query<{ lsn: string }>("select pg_current_wal_lsn()::text as lsn");
  const deadline = Date.now() + 15000;
  for (const replica of replicas) {
    while (Date.now() < deadline) {
      const [row] = await replica.query<{ caught: boolean }>("select pg_last_wal_replay_lsn() >= $1::pg_lsn as caught", [lsn]);
      if (row?.caught) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
