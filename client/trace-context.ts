/**
 * The caller's trace context on every request, so that the gateway's spans join the caller's trace:
 * the active OpenTelemetry span as `traceparent` (and `tracestate`) when `@opentelemetry/api` is
 * installed (an optional peer: looked up at run time, never required), else the Lambda's X-Ray trace
 * header (`_X_AMZN_TRACE_ID`, set in every invocation with active tracing) as `X-Amzn-Trace-Id`.
 * Nothing is sent when neither is there.
 */

/** As much of `@opentelemetry/api` as is read here (typed locally: the package is optional). */
interface OtelApi {
  context: { active(): unknown };
  trace: {
    getSpanContext(context: unknown): { traceId: string; spanId: string; traceFlags: number; traceState?: { serialize(): string } } | undefined;
    isSpanContextValid(spanContext: { traceId: string; spanId: string }): boolean;
  };
}

/** A specifier bundlers leave alone: the API is the application's own, found at run time if it has one. */
const OTEL_API = "@opentelemetry/api";
let otelApi: Promise<OtelApi | undefined> | undefined;

function loadOtelApi(): Promise<OtelApi | undefined> {
  otelApi ??= import(OTEL_API).then(
    (loaded: unknown) => (isOtelApi(loaded) ? loaded : undefined),
    () => undefined,
  );
  return otelApi;
}

function isOtelApi(loaded: unknown): loaded is OtelApi {
  const api = loaded as Partial<OtelApi> | null;
  return typeof api === "object" && api !== null && typeof api.context?.active === "function" && typeof api.trace?.getSpanContext === "function";
}

/** The headers naming the current trace (empty when there is none). */
export async function traceHeaders(): Promise<Record<string, string>> {
  const api = await loadOtelApi();
  if (api !== undefined) {
    const spanContext = api.trace.getSpanContext(api.context.active());
    if (spanContext !== undefined && api.trace.isSpanContextValid(spanContext)) {
      const flags = (spanContext.traceFlags & 1) === 1 ? "01" : "00";
      const headers: Record<string, string> = { traceparent: `00-${spanContext.traceId}-${spanContext.spanId}-${flags}` };
      const state = spanContext.traceState?.serialize();
      if (state) headers.tracestate = state;
      return headers;
    }
  }
  const xray = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?._X_AMZN_TRACE_ID;
  return xray ? { "x-amzn-trace-id": xray } : {};
}
