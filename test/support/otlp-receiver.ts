/**
 * An OTLP/HTTP traces receiver stand-in: a tiny HTTP server on an ephemeral loopback port that takes
 * `POST /v1/traces` in OTLP's JSON encoding (what @opentelemetry/exporter-trace-otlp-http sends:
 * https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding — ids as hex strings, attribute
 * values as AnyValue objects) and keeps the spans it decoded, as a collector would receive them.
 * Anything else is answered 400/404, so an exporter sending the wrong thing fails the test.
 */
import { createServer, type Server } from "node:http";
import { gunzipSync } from "node:zlib";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  serviceName: string;
  attributes: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  /** The traces URL to configure an exporter with. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Export requests received (decoded or not). */
  readonly requests: number;
  /** Spans decoded, kept or not. */
  readonly received: number;
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface TracesRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: KeyValue[] }[] }[];
  }[];
}

function valueOf(value: AnyValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  throw new Error(`unexpected OTLP attribute value ${JSON.stringify(value)}`);
}

function attributesOf(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

/** Decodes one OTLP/HTTP JSON export request into its spans. */
export function decodeTraces(body: TracesRequest): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of body.resourceSpans ?? []) {
    const serviceName = String(attributesOf(resourceSpans.resource?.attributes)["service.name"] ?? "");
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? "",
          name: span.name,
          kind: span.kind,
          serviceName,
          attributes: attributesOf(span.attributes),
        });
      }
    }
  }
  return spans;
}

/** `keep: false` counts spans without keeping them (a long run at full sampling: the bench). */
export async function startOtlpReceiver(options: { keep?: boolean } = {}): Promise<OtlpReceiver> {
  const keep = options.keep ?? true;
  const spans: ReceivedSpan[] = [];
  let requests = 0;
  let received = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      requests++;
      if (request.method !== "POST" || request.url !== "/v1/traces") {
        response.writeHead(404).end();
        return;
      }
      if (!String(request.headers["content-type"]).startsWith("application/json")) {
        response.writeHead(400, { "content-type": "application/json" }).end('{"message":"this stand-in decodes OTLP JSON only"}');
        return;
      }
      try {
        const raw = Buffer.concat(chunks);
        const text = request.headers["content-encoding"] === "gzip" ? gunzipSync(raw).toString("utf8") : raw.toString("utf8");
        const decoded = decodeTraces(JSON.parse(text) as TracesRequest);
        received += decoded.length;
        if (keep) spans.push(...decoded);
      } catch (err) {
        response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ message: (err as Error).message }));
        return;
      }
      // An ExportTraceServiceResponse with no partial success.
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the OTLP receiver has no TCP address");
  return {
    url: `http://127.0.0.1:${address.port}/v1/traces`,
    spans,
    get requests() {
      return requests;
    },
    get received() {
      return received;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
