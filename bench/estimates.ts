/**
 * How long each step of the bench should take (seconds), for the progress bar's plan and its time
 * left: rough rates measured on a 2-core machine. The bar corrects them by the pace of the steps
 * already done, so they only need to be right relative to one another.
 */
import { LEDGER_ESTIMATE_S } from "./instructions-bench.js";
import { type Part, POSTGRES_PARTS, settings as S } from "./settings.js";

/** Requests per second each kind of target reaches in report 1's burst; start-up cost per run added. */
const BURST_RATE: [match: string, perSecond: number][] = [
  ["new connection", 400],
  ["PgBouncer", 3000],
  ["Data API", 3000],
  ["Neon", 3000],
  ["in-process", 8000],
  ["HTTP alone", 8000],
];

/** Seconds per insert by target kind (one sequential caller). */
const INSERT_COST_S: [match: string, seconds: number][] = [
  ["poolgate", 0.35e-3],
  ["PgBouncer txn, pooled", 0.15e-3],
  ["in-process", 0.12e-3],
  ["new connection", 6.5e-3],
  ["PgBouncer txn, new", 0.8e-3],
];

const TOPOLOGY_START_S = 8;
const FAILOVER_PAIR_START_S = 6;
/** One failover run (2 s of load, the failover, 1 s more) and the standby's rejoining. */
const FAILOVER_RUN_S = 8;

const rateFor = <T>(table: [string, T][], name: string, fallback: T) => table.find(([match]) => name.includes(match))?.[1] ?? fallback;

export const estimate = {
  steadyRunS: () => (S.warmupMs + S.durationMs) / 1000 + 0.5,
  burstRunS: (label: string) => (S.burstCallers * S.burstRequests) / rateFor(BURST_RATE, label, 4000) + 1,
  insertsS: (name: string, count: number) => count * rateFor(INSERT_COST_S, name, 0.35e-3) + 0.3,
  conflictRoundS: () => 0.4,
  readScalingRunS: (durationMs: number) => 2.5 + durationMs / 1000,
  topologyStartS: () => TOPOLOGY_START_S,
  failoverPairStartS: () => FAILOVER_PAIR_START_S,
  failoverRunS: () => FAILOVER_RUN_S,

  /** The whole plan for the selected parts. */
  totalS(only: Set<Part>): number {
    let total = 0;
    const burstNames = (names: string[]) => names.reduce((sum, name) => sum + this.burstRunS(name), 0) * S.rounds;
    if (POSTGRES_PARTS.some((part) => only.has(part))) total += 5;
    if (only.has("throughput")) total += 10 * S.rounds * this.steadyRunS();
    if (only.has("burst")) total += burstNames(["poolgate", "Data API", "Neon", "in-process", "HTTP alone", "naive", "new connection", "PgBouncer"]);
    if (only.has("inserts")) {
      total += [["poolgate", S.inserts], ["in-process", S.inserts], ["PgBouncer txn, pooled", S.inserts], ["new connection", S.insertSample], ["PgBouncer txn, new", S.insertSample]].reduce(
        (sum, [name, count]) => sum + this.insertsS(String(name), Number(count)),
        0,
      );
    }
    if (only.has("conflicts")) total += S.conflictRounds * this.conflictRoundS();
    if (only.has("mysql")) total += 4 + 6 * S.rounds * this.steadyRunS() + burstNames(["poolgate", "in-process", "HTTP alone", "naive", "new connection"]);
    if (only.has("topology")) total += TOPOLOGY_START_S + 3 * S.rounds * this.readScalingRunS(S.durationMs) + 2 * (FAILOVER_PAIR_START_S + S.failovers * FAILOVER_RUN_S);
    if (only.has("isolation")) total += 3 * (2 + S.rounds * this.steadyRunS());
    // HTTP alone; 2 engines × 2 stores × (loopback, delayed) hit/uncached pairs; the ledger's three phases per engine.
    if (only.has("cache")) {
      const configurations = 4 * (S.cacheNetworkDelayMs > 0 ? 2 : 1);
      total += S.serverWarmupMs / 1000 + S.rounds * this.steadyRunS() + configurations * (2 + S.serverWarmupMs / 1000 + 2 * S.rounds * this.steadyRunS()) + 2 * (6 + (6 * S.durationMs) / 1000);
    }
    if (only.has("profile")) total += 6 * (3 + this.steadyRunS());
    if (only.has("instructions")) total += 4 * LEDGER_ESTIMATE_S;
    // Two engines: start-up, the buffered read and its streamed twin, then the long stream (~300,000 rows/s).
    if (only.has("streaming")) total += 2 * (3 + 5 + S.streamRows / 300_000);
    // Token reads on two stand-ins, then a failover on each (start, 5 s until the names move, 6 s after).
    if (only.has("aurora")) total += 2 * (15 + S.durationMs / 1000 + 2) + 2 * (15 + 16);
    // The Blue/Green stand-in (blue, green), the switchover under load.
    if (only.has("lifecycle")) total += 10 + 8 + 10;
    // Packing and installing the three drivers, then 15 fresh processes each.
    if (only.has("client")) total += 60 + 3 * 15 * 0.3;
    return total;
  },
};
