/**
 * HTTP load generator, run as its own process so its CPU is not the server's: `callers` concurrent
 * keep-alive callers POST JSON statements for a duration (or a fixed count each) and report latency
 * percentiles. Usage: load-driver.ts '<json DriverSpec>' -> prints one JSON DriverResult line.
 */
import { Pool } from "undici";
import { type BenchDialect, type BenchStatement, DATA_API_TARGET, type DriverResult, makeDataApiStatement, makeNeonStatement, makePlanetscaleStatement, makeStatement, NEON_HEADERS, PLANETSCALE_HEADERS, summarise } from "./workload.js";

export type Surface = "native" | "data-api" | "neon" | "planetscale";

/** How a PlanetScale answer to a failed statement begins its result (gateway/http/routes/planetscale.ts). */
const PLANETSCALE_FAILED = '"result":null,"error":';

/** Each surface's route, headers and body for a statement (the native API's path comes from the spec). */
function request(spec: DriverSpec, auth: Record<string, string>): { path: string; headers: Record<string, string>; body: string } {
  switch (spec.surface) {
    case "data-api":
      return { path: "/Execute", headers: auth, body: JSON.stringify({ ...DATA_API_TARGET, ...makeDataApiStatement(spec.statement) }) };
    case "neon":
      return { path: "/sql", headers: { ...auth, ...NEON_HEADERS }, body: JSON.stringify(makeNeonStatement(spec.statement)) };
    case "planetscale":
      return { path: "/psdb.v1alpha1.Database/Execute", headers: { ...auth, ...PLANETSCALE_HEADERS }, body: JSON.stringify(makePlanetscaleStatement(spec.statement)) };
    default: {
      const native = spec.cache === undefined ? makeStatement(spec.statement, spec.dialect) : Object.assign(makeStatement(spec.statement, spec.dialect), { cache: spec.cache });
      return { path: spec.path, headers: auth, body: JSON.stringify(native) };
    }
  }
}

export interface DriverSpec {
  url: string;
  path: string;
  statement: BenchStatement;
  dialect?: BenchDialect;
  /** The native API (default, at `path`), the Data API's ExecuteStatement (POST /Execute), Neon's protocol (POST /sql) or PlanetScale's (POST /psdb.v1alpha1.Database/Execute). */
  surface?: Surface;
  callers: number;
  /** Bearer tokens: caller i sends tokens[i % tokens.length] (callers of several principals, interleaved). */
  tokens?: string[];
  durationMs?: number;
  requestsPerCaller?: number;
  warmupMs: number;
  /** Sent as the request's `cache` (the native surface): the result cache part. */
  cache?: { ttlMs: number };
}

async function drive(spec: DriverSpec): Promise<void> {
  const pool = new Pool(spec.url, { connections: spec.callers, pipelining: 1, keepAliveTimeout: 60000 });
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  // Report 1: the callers' first requests go out together while the driver opens its connections; their slowest is kept apart.
  let firstRequestMax = 0;
  let laterRequestMax = 0;
  const send = async (record: boolean, caller: number, first = false) => {
    const token = spec.tokens?.[caller % spec.tokens.length];
    const auth: Record<string, string> = token === undefined ? { "content-type": "application/json" } : { "content-type": "application/json", "x-poolgate-auth": `Bearer ${token}` };
    const { path, headers, body } = request(spec, auth);
    const started = performance.now();
    try {
      const response = await pool.request({ method: "POST", path, headers, body });
      const text = await response.body.text();
      // PlanetScale's protocol answers a failed statement with a 200 whose result is null and whose error is set.
      if (response.statusCode !== 200 || (spec.surface === "planetscale" && text.includes(PLANETSCALE_FAILED))) {
        errors++;
        firstError ??= `${response.statusCode} ${text.slice(0, 300)}`;
      } else if (record) {
        const latency = performance.now() - started;
        latencies.push(latency);
        if (first) firstRequestMax = Math.max(firstRequestMax, latency);
        else laterRequestMax = Math.max(laterRequestMax, latency);
      }
    } catch (err) {
      errors++;
      firstError ??= String(err);
    }
  };
  const warmupEnd = performance.now() + spec.warmupMs;
  await Promise.all(
    Array.from({ length: Math.min(spec.callers, 32) }, async (_, caller) => {
      while (performance.now() < warmupEnd) await send(false, caller);
    }),
  );
  errors = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const end = started + (spec.durationMs ?? Number.POSITIVE_INFINITY);
  await Promise.all(
    Array.from({ length: spec.callers }, async (_, caller) => {
      for (let i = 0; spec.requestsPerCaller === undefined ? performance.now() < end : i < spec.requestsPerCaller; i++) await send(true, caller, i === 0);
    }),
  );
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  await pool.close();
  const result: DriverResult = {
    ...summarise(latencies, elapsedMs),
    errors,
    firstError,
    driverCpuUsPerRequest: (cpu.user + cpu.system) / Math.max(1, latencies.length + errors),
    ...(spec.requestsPerCaller !== undefined && spec.requestsPerCaller > 1 ? { firstRequestMax, laterRequestMax } : {}),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await drive(JSON.parse(process.argv[2] ?? "{}") as DriverSpec);
