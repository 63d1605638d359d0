/** The benchmark's statements and its latency summary, shared by every target. */
export type BenchStatement = "select1" | "point";

export const SEED_ROWS = 10000;

/** Which database the statements are written for: only the placeholder differs. */
export type BenchDialect = "postgres" | "mysql";

export function makeStatement(kind: BenchStatement, dialect: BenchDialect = "postgres"): { sql: string; params?: unknown[] } {
  if (kind === "select1") return { sql: "SELECT 1" };
  const placeholder = dialect === "mysql" ? "?" : "$1";
  return { sql: `SELECT id, name, balance FROM accounts WHERE id = ${placeholder}`, params: [1 + Math.floor(Math.random() * SEED_ROWS)] };
}

export interface LatencySummary {
  requests: number;
  throughput: number;
  p50: number;
  p99: number;
  max: number;
}

export function summarise(latencies: number[], elapsedMs: number): LatencySummary {
  const sorted = Float64Array.from(latencies).sort();
  const at = (q: number) =>
    sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number);
  return {
    requests: sorted.length,
    throughput: (sorted.length / elapsedMs) * 1000,
    p50: at(0.5),
    p99: at(0.99),
    max: sorted.length === 0 ? Number.NaN : (sorted[sorted.length - 1] as number),
  };
}

export const DATA_API_TARGET = {
  resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:poolgate-bench",
  secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:bench",
};

/** The same statements as Data API ExecuteStatement input (named parameter :1, a longValue). */
export function makeDataApiStatement(kind: BenchStatement): { sql: string; parameters?: { name: string; value: { longValue: number } }[] } {
  if (kind === "select1") return { sql: "SELECT 1" };
  return { sql: "SELECT id, name, balance FROM accounts WHERE id = :1", parameters: [{ name: "1", value: { longValue: 1 + Math.floor(Math.random() * SEED_ROWS) } }] };
}
