/** Turns a request's run options into engine ExecuteOptions, rejecting (never clamping) bad values. */
import type { GatewayConfig } from "../config/schema.js";
import type { ExecuteOptions } from "../engines/engine.js";
import { GatewayError } from "../errors.js";

export interface RequestRunOptions {
  timeoutMs?: number | undefined;
  bigNumbers?: "string" | "number" | undefined;
}

export function executeOptions(config: GatewayConfig, request: RequestRunOptions): ExecuteOptions {
  const timeoutMs = request.timeoutMs ?? config.statements.defaultTimeoutMs;
  if (timeoutMs > config.statements.maxTimeoutMs) {
    throw new GatewayError("INVALID_REQUEST", `timeoutMs ${timeoutMs} exceeds the maximum of ${config.statements.maxTimeoutMs}`, {
      issues: [{ path: "timeoutMs", message: `must be at most ${config.statements.maxTimeoutMs}` }],
    });
  }
  return {
    timeoutMs,
    bigNumbers: request.bigNumbers ?? "string",
    maxResultBytes: config.limits.maxResultBytes,
    maxResultRows: config.limits.maxResultRows,
  };
}
