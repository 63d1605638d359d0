/** Starts an in-process gateway on an ephemeral port and speaks its HTTP API for tests. */
import type { Gateway } from "../../gateway/app.js";
import { createGateway } from "../../gateway/app.js";
import { parseConfig } from "../../gateway/config/load.js";
import type { GatewayConfigInput } from "../../gateway/config/schema.js";
import { type Logger, silentLogger } from "../../gateway/logger.js";
import type { Clock } from "../../gateway/clock.js";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";

export interface TestGateway {
  gateway: Gateway;
  baseUrl: string;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<HttpResult>;
  get(path: string, headers?: Record<string, string>): Promise<HttpResult>;
  stop(): Promise<void>;
}

export interface HttpResult {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON shapes
  body: any;
}

export interface TestGatewayOptions {
  clock?: Clock;
  /** Where the gateway logs (default: nowhere). */
  logger?: Logger;
  /** With tracing on: where spans go as they end (instead of OTLP/HTTP). */
  spanExporter?: SpanExporter;
}

export async function startTestGateway(config: GatewayConfigInput, clockOrOptions?: Clock | TestGatewayOptions): Promise<TestGateway> {
  const options: TestGatewayOptions = clockOrOptions === undefined ? {} : "now" in clockOrOptions ? { clock: clockOrOptions } : clockOrOptions;
  const parsed = parseConfig({ ...config, server: { port: 0, ...config.server } }, "test");
  const gateway = await createGateway(parsed, options.logger ?? silentLogger, {
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.spanExporter ? { spanExporter: options.spanExporter } : {}),
  });
  const baseUrl = await gateway.listen();
  const request = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult> => {
    const response = await fetch(baseUrl + path, {
      method,
      headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text.length > 0 ? JSON.parse(text) : undefined };
  };
  return {
    gateway,
    baseUrl,
    post: (path, body, headers) => request("POST", path, body, headers),
    get: (path, headers) => request("GET", path, undefined, headers),
    stop: () => gateway.drain(),
  };
}

/** Transactions the gateway holds open, over every cluster (native and Data API alike). */
export function openTransactions(gw: TestGateway): number {
  let open = 0;
  for (const cluster of gw.gateway.clusters.values()) open += cluster.health().openTransactions;
  return open;
}
