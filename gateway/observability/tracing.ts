/**
 * The gateway's tracer (issue 39, docs/tracing.md): built only when `tracing.enabled`, with its own
 * provider (never the process-wide one, so two gateways in one process keep their settings), a
 * parent-based trace-id-ratio sampler, and a batch processor exporting over OTLP/HTTP. It starts each
 * request's server span from the caller's headers and marks retries and failover signs on the active
 * request's span, from the gateway's events.
 */
import { context, type Span, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import type { IncomingHttpHeaders } from "node:http";
import type { TracingConfig } from "../config/schema.js";
import type { GatewayEvents } from "../events.js";
import { activeTrace, RequestTrace } from "../tracing/request-trace.js";
import { parentContextOf } from "./trace-headers.js";

/** The tracer's scope name and version in exported spans. */
const SCOPE = "poolgate";

export interface TracingOptions {
  /** Export here instead of OTLP/HTTP, each span as it ends (tests: an in-memory exporter). */
  exporter?: SpanExporter;
}

export class GatewayTracing {
  private readonly provider: BasicTracerProvider;
  private readonly tracer;
  private readonly unsubscribe: (() => void)[] = [];

  constructor(
    private readonly config: TracingConfig,
    version: string,
    events: GatewayEvents,
    options: TracingOptions = {},
  ) {
    enableContextManager();
    const processor = options.exporter
      ? new SimpleSpanProcessor(options.exporter)
      : new BatchSpanProcessor(new OTLPTraceExporter({ url: config.endpoint, timeoutMillis: config.exportTimeoutMs }), {
          maxQueueSize: config.maxQueueSize,
          maxExportBatchSize: Math.min(512, config.maxQueueSize),
          scheduledDelayMillis: config.scheduledDelayMs,
          exportTimeoutMillis: config.exportTimeoutMs,
        });
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": config.serviceName, "service.version": version }),
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
      spanProcessors: [processor],
    });
    this.tracer = this.provider.getTracer(SCOPE, version);
    this.unsubscribe.push(
      events.on("retry", ({ code }) => markActive("poolgate.retry", "error.type", code)),
      events.on("failoverSignal", ({ reason }) => markActive("poolgate.failover_signal", "poolgate.reason", reason)),
    );
  }

  /**
   * The server span of a request arriving with `headers`, under the caller's span when it sent one.
   * Undefined when it records nothing and no SQL comment needs its traceparent: such a request is not
   * made active at all, so its layers pay nothing.
   */
  startRequest(method: string, route: string, path: string, headers: IncomingHttpHeaders): RequestTrace | undefined {
    const parent = parentContextOf(headers);
    const name = `${method} ${route}`;
    const span = this.tracer.startSpan(name, { kind: SpanKind.SERVER }, parent);
    const recording = span.isRecording();
    if (!recording && !this.config.sqlComments) return undefined;
    if (recording) {
      span.setAttribute("http.request.method", method);
      span.setAttribute("http.route", route);
      span.setAttribute("url.path", path);
    }
    return new RequestTrace(this.tracer, span, recording, this.config, name, parent);
  }

  /** Ends a request's server span with its answer's status. */
  endRequest(request: RequestTrace, status: number, outcome: string | undefined): void {
    const span = request.span;
    if (request.recording) {
      span.setAttribute("http.response.status_code", status);
      if (request.principal !== "") span.setAttribute("enduser.id", request.principal);
      if (outcome !== undefined) span.setAttribute("error.type", outcome);
      // HTTP semantic conventions: a server span is an error for a 5xx only.
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }

  /** Runs `work` with the request's trace active (the handler, and everything it starts). */
  run<T>(request: RequestTrace, work: () => T): T {
    return context.with(request.context, work);
  }

  /** Sends what is still queued and stops exporting. */
  async shutdown(): Promise<void> {
    for (const off of this.unsubscribe) off();
    await this.provider.shutdown();
  }

  async flush(): Promise<void> {
    await this.provider.forceFlush();
  }
}

/** A zero-length span marking a moment of the active request (a retry, a failover sign). */
function markActive(name: string, key: string, value: string): void {
  const request = activeTrace();
  if (request === undefined || !request.recording) return;
  const span: Span = request.tracer.startSpan(name, { attributes: { [key]: value } }, context.active());
  span.end();
}

/**
 * Registers an AsyncLocalStorage context manager once per process: the first gateway with tracing on
 * does it, and it stays (the API keeps one global manager; others in the process share it).
 */
function enableContextManager(): void {
  const manager = new AsyncLocalStorageContextManager().enable();
  // false: one is registered already (an earlier gateway's), and serves this one too.
  if (!context.setGlobalContextManager(manager)) manager.disable();
}
