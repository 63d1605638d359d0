/**
 * What makes two requests "the same request" under one idempotency key: a SHA-256 of their canonical
 * JSON (object keys sorted, so the order a caller wrote its fields in does not matter). The surface,
 * cluster, operation, SQL, parameters and options that change what runs or how the answer is shaped
 * are in it; timeouts, consistency tokens and freshness bounds are not (a retry may change them).
 */
import { createHash } from "node:crypto";

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, field]) => field !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, field]) => [key, canonical(field)]));
}

/** The request's fingerprint: 64 hex digits. */
export function fingerprint(request: Record<string, unknown>): string {
  return createHash("sha256").update(JSON.stringify(canonical(request))).digest("hex");
}
