/** The benchmark's statements and its latency summary, shared by every target and driver. */
import { format as formatPlanetscale } from "@planetscale/database";

export type BenchStatement = "select1" | "point" | "insert" | "hot";

export const SEED_ROWS = 10000;

/** Report 4's table: unlogged, so the disk's WAL flush (not the pool) does not set the per-insert cost. */
export const INSERT_TABLE = "bench_inserts";

/** Which database the statements are written for: only the placeholder differs. */
export type BenchDialect = "postgres" | "mysql";

export function makeStatement(kind: BenchStatement, dialect: BenchDialect = "postgres"): { sql: string; params?: unknown[] } {
  const placeholder = dialect === "mysql" ? "?" : "$1";
  if (kind === "select1") return { sql: "SELECT 1" };
  if (kind === "insert") return { sql: `INSERT INTO ${INSERT_TABLE} (payload) VALUES (${placeholder})`, params: [`row-${Math.random().toString(36).slice(2, 10)}`] };
  // The same read every time (the cache part's: one entry, hit by every caller).
  if (kind === "hot") return { sql: `SELECT id, name, balance FROM accounts WHERE id = ${placeholder}`, params: [42] };
  return { sql: `SELECT id, name, balance FROM accounts WHERE id = ${placeholder}`, params: [randomId()] };
}

const randomId = () => 1 + Math.floor(Math.random() * SEED_ROWS);

export interface LatencySummary {
  requests: number;
  elapsedMs: number;
  throughput: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** What every driver process prints as its one JSON line. */
export interface DriverResult extends LatencySummary {
  errors: number;
  firstError?: string;
  /** The driver process's own CPU per measured request (user + system), where it reports it. */
  driverCpuUsPerRequest?: number;
  /**
   * With a fixed count per caller (report 1): the slowest of the callers' first requests (the first
   * wave, all sent at once while the driver opens its connections) and the slowest of the rest.
   */
  firstRequestMax?: number;
  laterRequestMax?: number;
}

export function summarise(latencies: number[], elapsedMs: number): LatencySummary {
  const sorted = Float64Array.from(latencies).sort();
  const at = (q: number) =>
    sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number);
  return {
    requests: sorted.length,
    elapsedMs,
    throughput: (sorted.length / elapsedMs) * 1000,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: sorted.length === 0 ? Number.NaN : (sorted[sorted.length - 1] as number),
  };
}

/** Neon's protocol (POST /sql) as its driver sends it: the cluster named by the connection string, parameters as text. */
export const NEON_HEADERS = { "neon-connection-string": "postgresql://bench@poolgate/default", "neon-raw-text-output": "true", "neon-array-mode": "true" };

/** The same statements as Neon's `{query, params}`. */
export function makeNeonStatement(kind: BenchStatement): { query: string; params: string[] } {
  const { sql, params = [] } = makeStatement(kind, "postgres");
  return { query: sql, params: params.map(String) };
}

/** PlanetScale's protocol as its driver sends it: the cluster named by the Basic username (authentication is off in the bench). */
export const PLANETSCALE_HEADERS = { authorization: `Basic ${Buffer.from("bench@default:unused").toString("base64")}` };

/** The same statements as PlanetScale's `{query, session}`: values formatted into the text by the driver's own `format`. */
export function makePlanetscaleStatement(kind: BenchStatement): { query: string; session: null } {
  const { sql, params } = makeStatement(kind, "mysql");
  return { query: params === undefined ? sql : formatPlanetscale(sql, params), session: null };
}

export const DATA_API_TARGET = {
  resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:poolgate-bench",
  secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:bench",
};

type DataApiValue = { longValue: number } | { stringValue: string };

/** The same statements as Data API ExecuteStatement input (named parameter :1). */
export function makeDataApiStatement(kind: BenchStatement): { sql: string; parameters?: { name: string; value: DataApiValue }[] } {
  if (kind === "select1") return { sql: "SELECT 1" };
  if (kind === "insert") {
    return { sql: `INSERT INTO ${INSERT_TABLE} (payload) VALUES (:1)`, parameters: [{ name: "1", value: { stringValue: `row-${randomId()}` } }] };
  }
  return { sql: "SELECT id, name, balance FROM accounts WHERE id = :1", parameters: [{ name: "1", value: { longValue: randomId() } }] };
}
