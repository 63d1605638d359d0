/**
 * The bench's knobs, read from the environment once (the bench's counterpart of the gateway's config
 * module: no other bench file reads process.env). Every value has a default sized so that the whole
 * run fits in a few minutes on a 2-core machine; run.ts's header lists them.
 */
import { z } from "zod";

const count = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

export const PARTS = ["throughput", "burst", "inserts", "conflicts", "mysql", "topology", "isolation", "cache", "streaming", "aurora", "lifecycle", "client", "tracing", "profile", "instructions"] as const;
export type Part = (typeof PARTS)[number];
/**
 * What a plain `npm run bench` runs: every part but the profile, which slows the servers it watches,
 * and the instruction ledger (about 20 minutes under valgrind), which are asked for by name.
 */
const DEFAULT_PARTS = PARTS.filter((part) => part !== "profile" && part !== "instructions");
/** `npm run bench -- --profile` (or POOLGATE_BENCH_PROFILE=1): the profile part, alone unless POOLGATE_BENCH_ONLY names others. */
const profileAsked = process.argv.includes("--profile") || process.env.POOLGATE_BENCH_PROFILE === "1";
/** The parts that run against the local PostgreSQL (POOLGATE_BENCH_ONLY=postgres). */
export const POSTGRES_PARTS = ["throughput", "burst", "inserts", "conflicts"] as const satisfies readonly Part[];

/** POOLGATE_BENCH_ONLY: a comma-separated list of parts; `postgres` names the four PostgreSQL scenarios. */
const onlySchema = z
  .string()
  .optional()
  .transform((value, ctx): Set<Part> => {
    if (value === undefined || value.trim() === "") return new Set<Part>(profileAsked ? ["profile"] : DEFAULT_PARTS);
    const parts = new Set<Part>();
    for (const name of value.split(",").map((part) => part.trim())) {
      if (name === "postgres") for (const part of POSTGRES_PARTS) parts.add(part);
      else if ((PARTS as readonly string[]).includes(name)) parts.add(name as Part);
      else ctx.addIssue({ code: "custom", message: `unknown part "${name}"; expected postgres or ${PARTS.join(", ")}` });
    }
    if (profileAsked) parts.add("profile");
    return parts;
  });

const envSchema = z.object({
  POOLGATE_BENCH_ONLY: onlySchema,
  POOLGATE_BENCH_PROFILE: z.string().optional(),
  POOLGATE_BENCH_ADMIN_URL: z.string().default("postgres://postgres@127.0.0.1:5432/test"),
  POOLGATE_BENCH_MYSQL_URL: z.string().default("mysql://root@127.0.0.1:3306/test"),
  POOLGATE_BENCH_PGBOUNCER: z.string().optional(),
  POOLGATE_BENCH_OUT: z.string().default("bench-results"),
  POOLGATE_BENCH_POOL: count(10),
  POOLGATE_BENCH_ROUNDS: count(3),
  POOLGATE_BENCH_MAX_ROUNDS: count(7),
  POOLGATE_BENCH_STABLE_PCT: z.coerce.number().min(0).default(3),
  POOLGATE_BENCH_CALLERS: count(32),
  POOLGATE_BENCH_DURATION_MS: count(2000),
  POOLGATE_BENCH_WARMUP_MS: z.coerce.number().int().min(0).default(1000),
  POOLGATE_BENCH_SERVER_WARMUP_MS: z.coerce.number().int().min(0).default(5000),
  POOLGATE_BENCH_BURST_CALLERS: count(750),
  POOLGATE_BENCH_BURST_REQUESTS: count(4),
  POOLGATE_BENCH_INSERTS: count(100000),
  POOLGATE_BENCH_INSERTS_SAMPLE: count(2000),
  POOLGATE_BENCH_CONFLICT_CALLERS: count(10),
  POOLGATE_BENCH_CONFLICT_ROUNDS: count(20),
  POOLGATE_BENCH_FAILOVERS: count(3),
  POOLGATE_BENCH_STREAM_ROWS: count(10_000_000),
  POOLGATE_BENCH_CACHE_DELAY_MS: z.coerce.number().int().min(0).default(1),
});

function load() {
  const parsed = envSchema.safeParse(process.env);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `  - ${issue.path.join(".")}: ${issue.message}`).join("\n");
    process.stderr.write(`bench: invalid settings:\n${issues}\n`);
    process.exit(2);
  }
  const env = parsed.data;
  return Object.freeze({
    only: env.POOLGATE_BENCH_ONLY,
    adminUrl: env.POOLGATE_BENCH_ADMIN_URL,
    mysqlAdminUrl: env.POOLGATE_BENCH_MYSQL_URL,
    pgbouncerBinary: env.POOLGATE_BENCH_PGBOUNCER,
    outDir: env.POOLGATE_BENCH_OUT,
    poolSize: env.POOLGATE_BENCH_POOL,
    rounds: env.POOLGATE_BENCH_ROUNDS,
    stability: { tolerance: env.POOLGATE_BENCH_STABLE_PCT / 100, maxRounds: Math.max(env.POOLGATE_BENCH_ROUNDS, env.POOLGATE_BENCH_MAX_ROUNDS) },
    callers: env.POOLGATE_BENCH_CALLERS,
    durationMs: env.POOLGATE_BENCH_DURATION_MS,
    warmupMs: env.POOLGATE_BENCH_WARMUP_MS,
    serverWarmupMs: env.POOLGATE_BENCH_SERVER_WARMUP_MS,
    burstCallers: env.POOLGATE_BENCH_BURST_CALLERS,
    burstRequests: env.POOLGATE_BENCH_BURST_REQUESTS,
    inserts: env.POOLGATE_BENCH_INSERTS,
    insertSample: Math.min(env.POOLGATE_BENCH_INSERTS_SAMPLE, env.POOLGATE_BENCH_INSERTS),
    conflictCallers: env.POOLGATE_BENCH_CONFLICT_CALLERS,
    conflictRounds: env.POOLGATE_BENCH_CONFLICT_ROUNDS,
    failovers: env.POOLGATE_BENCH_FAILOVERS,
    streamRows: env.POOLGATE_BENCH_STREAM_ROWS,
    cacheNetworkDelayMs: env.POOLGATE_BENCH_CACHE_DELAY_MS,
  });
}

export const settings = load();
export type BenchSettings = typeof settings;
