/**
 * One span per database round trip of a traced request, with OpenTelemetry's database semantic
 * conventions (https://opentelemetry.io/docs/specs/semconv/database/database-spans/): db.system.name,
 * db.namespace, db.operation.name, server.address and server.port; db.query.text only when
 * `tracing.statementText` is on, never a parameter; db.response.status_code (the SQLSTATE) and
 * error.type on failure. The engines call it for every statement they send, the gateway's own
 * (BEGIN, COMMIT, a reset) included. With nothing recording it answers undefined and costs one
 * context look-up.
 */
import { context, type Span, SpanKind } from "@opentelemetry/api";
import { activeTrace } from "../tracing/request-trace.js";

export interface RoundTripTarget {
  readonly system: "postgresql" | "mysql" | "mariadb";
  readonly namespace: string;
  readonly address: string;
  readonly port: number;
}

/** SELECT, INSERT... from the statement's first keyword (after comments and parentheses). */
export function operationOf(sql: string): string {
  const match = /^(?:\s+|--[^\n]*\n|#[^\n]*\n|\/\*[\s\S]*?\*\/|\()*([A-Za-z]+)/.exec(sql);
  return match?.[1]?.toUpperCase() ?? "";
}

/** A round trip's span under the active span, or undefined when nothing records. */
export function startRoundTrip(sql: string, target: () => RoundTripTarget): Span | undefined {
  const request = activeTrace();
  if (request === undefined || !request.recording) return undefined;
  const { system, namespace, address, port } = target();
  const operation = operationOf(sql);
  const span = request.tracer.startSpan(operation === "" ? namespace : `${operation} ${namespace}`, { kind: SpanKind.CLIENT }, context.active());
  span.setAttribute("db.system.name", system);
  span.setAttribute("db.namespace", namespace);
  if (operation !== "") span.setAttribute("db.operation.name", operation);
  span.setAttribute("server.address", address);
  span.setAttribute("server.port", port);
  if (request.settings.statementText) span.setAttribute("db.query.text", sql);
  return span;
}
