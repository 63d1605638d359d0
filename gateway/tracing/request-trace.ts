/**
 * A request's trace as the gateway's layers see it: the server span, whether it records, and who asked
 * by which route. While a traced request's handler runs, it is the active OpenTelemetry context's value
 * (an AsyncLocalStorage context manager carries it through promises and timers), so the pool, the router
 * and the engines start their spans under the request's without being handed anything.
 *
 * With tracing off no context manager is registered: `context.active()` answers the root context, the
 * look-up finds nothing and no span object is made (docs/performance.md, docs/tracing.md).
 */
import { context, createContextKey, type Context, type Span, SpanStatusCode, trace, type Tracer } from "@opentelemetry/api";
import { GatewayError } from "../errors.js";

/** What the engines do with a traced request's statements. */
export interface TraceSettings {
  /** Record db.query.text (never parameters). */
  readonly statementText: boolean;
  /** Append a sqlcommenter comment to the SQL sent (sql-comment.ts). */
  readonly sqlComments: boolean;
}

export class RequestTrace {
  /** The caller's principal, known once authenticated ("" until then). */
  principal = "";
  /** The context carrying the server span and this trace. */
  readonly context: Context;
  /** A traceparent for the server span, made once when a SQL comment first asks for it. */
  private traceparentText: string | undefined;

  constructor(
    readonly tracer: Tracer,
    readonly span: Span,
    /** Whether spans are recorded (sampled); a trace that is not is active only to carry SQL comments. */
    readonly recording: boolean,
    readonly settings: TraceSettings,
    /** The matched route ("POST /v1/query"). */
    readonly route: string,
    parent: Context,
  ) {
    this.context = trace.setSpan(parent, span).setValue(REQUEST_TRACE, this);
  }

  /** A child of the server span (undefined when not recording): for work outside the handler's context (authentication). */
  child(name: string): Span | undefined {
    return this.recording ? this.tracer.startSpan(name, undefined, this.context) : undefined;
  }

  get traceparent(): string {
    if (this.traceparentText === undefined) {
      const { traceId, spanId, traceFlags } = this.span.spanContext();
      this.traceparentText = `00-${traceId}-${spanId}-${(traceFlags & 1) === 1 ? "01" : "00"}`;
    }
    return this.traceparentText;
  }
}

const REQUEST_TRACE = createContextKey("poolgate.request-trace");

/** The request trace of the work running now; undefined with tracing off, outside a request, or for a request not traced. */
export function activeTrace(): RequestTrace | undefined {
  return context.active().getValue(REQUEST_TRACE) as RequestTrace | undefined;
}

/** A span under the active request's (whichever span is active), or undefined when nothing records. */
export function startSpan(name: string): Span | undefined {
  const active = context.active();
  const request = active.getValue(REQUEST_TRACE) as RequestTrace | undefined;
  if (request === undefined || !request.recording) return undefined;
  return request.tracer.startSpan(name, undefined, active);
}

/** Runs `work` with `span` as the active span (its children hang under it). */
export function withSpan<T>(span: Span, work: () => T): T {
  return context.with(trace.setSpan(context.active(), span), work);
}

/** Ends a span as failed: error.type is the registry code where there is one (the error's class otherwise). */
export function failSpan(span: Span, err: unknown): void {
  const code = err instanceof GatewayError ? err.code : err instanceof Error ? err.name : "unknown";
  span.setAttribute("error.type", code);
  if (err instanceof GatewayError && err.database?.sqlstate !== undefined) span.setAttribute("db.response.status_code", err.database.sqlstate);
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  span.end();
}

/** Ends `span` when `promise` settles (failed or not); answers the promise itself. */
export function endWith<T>(span: Span, promise: Promise<T>, onValue?: (value: T, span: Span) => void): Promise<T> {
  return promise.then(
    (value) => {
      onValue?.(value, span);
      span.end();
      return value;
    },
    (err: unknown) => {
      failSpan(span, err);
      throw err;
    },
  );
}
