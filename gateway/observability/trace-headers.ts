/**
 * The caller's trace, from its headers: W3C `traceparent`/`tracestate` first, else AWS X-Ray's
 * `X-Amzn-Trace-Id` (what a Lambda with active tracing and the client SDK send), converted to the same
 * span context: `Root=1-5759e988-bd862e3fe1be46a994272793` is the 32-hex trace id
 * 5759e988bd862e3fe1be46a994272793, `Parent=53995c3f42cd8ad8` the parent span id, `Sampled=1` the
 * sampled flag (https://docs.aws.amazon.com/xray/latest/devguide/xray-concepts.html#xray-concepts-tracingheader).
 * A header without a Parent (a load balancer's Root alone) names no span to hang under and is ignored.
 */
import type { IncomingHttpHeaders } from "node:http";
import { type Context, ROOT_CONTEXT, type TextMapGetter, trace, TraceFlags } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";

export const XRAY_HEADER = "x-amzn-trace-id";

const w3c = new W3CTraceContextPropagator();

const headerGetter: TextMapGetter<IncomingHttpHeaders> = {
  keys: (headers) => Object.keys(headers),
  get: (headers, key) => headers[key],
};

const XRAY_ROOT = /^1-([0-9a-f]{8})-([0-9a-f]{24})$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const ZERO_SPAN_ID = "0000000000000000";
const ZERO_TRACE_ID = "00000000000000000000000000000000";

/** The context a request's server span starts in: the caller's remote span, or the root (a new trace). */
export function parentContextOf(headers: IncomingHttpHeaders): Context {
  if (headers.traceparent !== undefined) {
    const extracted = w3c.extract(ROOT_CONTEXT, headers, headerGetter);
    if (trace.getSpanContext(extracted) !== undefined) return extracted;
  }
  const xray = headers[XRAY_HEADER];
  if (typeof xray === "string") {
    const spanContext = spanContextOfXray(xray);
    if (spanContext !== undefined) return trace.setSpanContext(ROOT_CONTEXT, spanContext);
  }
  return ROOT_CONTEXT;
}

/** X-Ray's Root/Parent/Sampled as a remote span context; undefined when it names no valid parent. */
export function spanContextOfXray(header: string): { traceId: string; spanId: string; traceFlags: number; isRemote: true } | undefined {
  let traceId: string | undefined;
  let spanId: string | undefined;
  let sampled = false;
  for (const part of header.split(";")) {
    const at = part.indexOf("=");
    if (at < 0) continue;
    const key = part.slice(0, at).trim().toLowerCase();
    const value = part.slice(at + 1).trim().toLowerCase();
    if (key === "root") {
      const match = XRAY_ROOT.exec(value);
      if (match) traceId = `${match[1]}${match[2]}`;
    } else if (key === "parent") {
      if (SPAN_ID.test(value)) spanId = value;
    } else if (key === "sampled") {
      sampled = value === "1";
    }
  }
  if (traceId === undefined || spanId === undefined || traceId === ZERO_TRACE_ID || spanId === ZERO_SPAN_ID) return undefined;
  return { traceId, spanId, traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE, isRemote: true };
}

/** X-Ray's header for a span context (the client SDK sends it beside traceparent). */
export function xrayHeaderOf(traceId: string, spanId: string, sampled: boolean): string {
  return `Root=1-${traceId.slice(0, 8)}-${traceId.slice(8)};Parent=${spanId};Sampled=${sampled ? "1" : "0"}`;
}
