/** Turns a request's run options into engine ExecuteOptions, rejecting (never clamping) bad values. */
import type { GatewayConfig } from "../config/schema.js";
import type { ExecuteOptions } from "../engines/engine.js";
import { GatewayError } from "../errors.js";
import { type RunAs, UNRESTRICTED } from "./run-as.js";

export interface RequestRunOptions {
  timeoutMs?: number | undefined;
  bigNumbers?: "string" | "number" | undefined;
  /** Values as the database printed them (StatementMode.textValues). */
  textValues?: boolean | undefined;
}

/** limits.maxParams: a statement carrying more parameters is refused before anything runs. */
export function checkParamCount(config: GatewayConfig, count: number): void {
  const max = config.limits.maxParams;
  if (count > max) {
    throw new GatewayError("INVALID_REQUEST", `${count} parameters exceed limits.maxParams (${max})`, {
      issues: [{ path: "params", message: `at most ${max} parameters` }],
    });
  }
}

export function executeOptions(config: GatewayConfig, request: RequestRunOptions, runAs: RunAs = UNRESTRICTED): ExecuteOptions {
  const maxTimeoutMs = Math.min(config.statements.maxTimeoutMs, runAs.maxTimeoutMs ?? Number.POSITIVE_INFINITY);
  const timeoutMs = request.timeoutMs ?? Math.min(config.statements.defaultTimeoutMs, maxTimeoutMs);
  if (timeoutMs > maxTimeoutMs) {
    const whose = maxTimeoutMs < config.statements.maxTimeoutMs ? "this principal's maximum" : "the maximum";
    throw new GatewayError("INVALID_REQUEST", `timeoutMs ${timeoutMs} exceeds ${whose} of ${maxTimeoutMs}`, {
      issues: [{ path: "timeoutMs", message: `must be at most ${maxTimeoutMs}` }],
    });
  }
  return {
    timeoutMs,
    bigNumbers: request.bigNumbers ?? "string",
    maxResultBytes: config.limits.maxResultBytes,
    maxResultRows: config.limits.maxResultRows,
  };
}
