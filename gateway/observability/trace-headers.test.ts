import type { IncomingHttpHeaders } from "node:http";
import { trace, TraceFlags } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { parentContextOf, spanContextOfXray, xrayHeaderOf } from "./trace-headers.js";

const remote = (headers: IncomingHttpHeaders) => trace.getSpanContext(parentContextOf(headers));

describe("the caller's trace from its headers", () => {
  it("reads W3C traceparent and tracestate", () => {
    const found = remote({ traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate: "vendor=abc" });
    expect(found).toMatchObject({ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: TraceFlags.SAMPLED, isRemote: true });
    expect(found?.traceState?.get("vendor")).toBe("abc");
  });

  it("converts X-Ray's Root, Parent and Sampled into a span context", () => {
    expect(spanContextOfXray("Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1")).toEqual({
      traceId: "5759e988bd862e3fe1be46a994272793",
      spanId: "53995c3f42cd8ad8",
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    expect(spanContextOfXray("Sampled=0; Parent=53995c3f42cd8ad8; Root=1-5759e988-bd862e3fe1be46a994272793;Lineage=a87bd80c:0")?.traceFlags).toBe(TraceFlags.NONE);
  });

  it("ignores an X-Ray header without a parent, or malformed", () => {
    expect(spanContextOfXray("Root=1-5759e988-bd862e3fe1be46a994272793")).toBeUndefined();
    expect(spanContextOfXray("Root=2-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8")).toBeUndefined();
    expect(spanContextOfXray("Root=1-5759e988-bd862e3fe1be46a994272793;Parent=0000000000000000")).toBeUndefined();
    expect(remote({ "x-amzn-trace-id": "nonsense" })).toBeUndefined();
  });

  it("prefers traceparent over X-Amzn-Trace-Id, and falls back when traceparent is invalid", () => {
    const xray = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
    expect(remote({ traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "x-amzn-trace-id": xray })?.traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(remote({ traceparent: "garbage", "x-amzn-trace-id": xray })?.traceId).toBe("5759e988bd862e3fe1be46a994272793");
    expect(remote({})).toBeUndefined();
  });

  it("writes X-Ray's header back from a span context", () => {
    expect(xrayHeaderOf("5759e988bd862e3fe1be46a994272793", "53995c3f42cd8ad8", true)).toBe("Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1");
  });
});
