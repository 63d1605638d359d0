/**
 * Load through the unmodified AWS SDK (`@aws-sdk/client-rds-data`) pointed at the gateway: what a
 * Lambda migrating from the Data API pays, SigV4 signing and response parsing included. `callers`
 * concurrent callers on one client with a keep-alive agent. Usage: sdk-driver.ts '<json spec>' -> one
 * JSON line like load-driver's.
 */
import http from "node:http";
import { ExecuteStatementCommand, RDSDataClient } from "@aws-sdk/client-rds-data";
import { type BenchStatement, DATA_API_TARGET, makeDataApiStatement, summarise } from "./workload.js";

interface SdkDriverSpec {
  url: string;
  statement: BenchStatement;
  callers: number;
  durationMs: number;
  warmupMs: number;
}

const spec = JSON.parse(process.argv[2] ?? "{}") as SdkDriverSpec;
const client = new RDSDataClient({
  region: "us-east-1",
  endpoint: spec.url,
  credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "bench" },
  maxAttempts: 1,
  requestHandler: { httpAgent: new http.Agent({ keepAlive: true, maxSockets: spec.callers }) },
});
const latencies: number[] = [];
let errors = 0;
let firstError: string | undefined;

async function loop(until: number, record: boolean): Promise<void> {
  while (performance.now() < until) {
    const started = performance.now();
    try {
      await client.send(new ExecuteStatementCommand({ ...DATA_API_TARGET, ...makeDataApiStatement(spec.statement) }));
      if (record) latencies.push(performance.now() - started);
    } catch (err) {
      errors++;
      firstError ??= String(err);
    }
  }
}

const warmupEnd = performance.now() + spec.warmupMs;
await Promise.all(Array.from({ length: spec.callers }, () => loop(warmupEnd, false)));
errors = 0;
const started = performance.now();
await Promise.all(Array.from({ length: spec.callers }, () => loop(started + spec.durationMs, true)));
const elapsedMs = performance.now() - started;
client.destroy();
process.stdout.write(`${JSON.stringify({ ...summarise(latencies, elapsedMs), errors, firstError })}\n`);
