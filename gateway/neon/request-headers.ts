/**
 * What Neon's driver says in headers: `Neon-Connection-String` (whose database names the cluster and
 * whose password is the caller's credential, see connection-string.ts), `Neon-Array-Mode`,
 * `Neon-Raw-Text-Output`, and for a batch `Neon-Batch-Isolation-Level`, `Neon-Batch-Read-Only` and
 * `Neon-Batch-Deferrable`. Besides them, Poolgate's own: a consistency token in and out, and an
 * idempotency key (idempotency-header.ts).
 */
import type { IncomingHttpHeaders } from "node:http";
import type { Isolation } from "../../schemas/query.js";
import { GatewayError } from "../errors.js";

export const CONNECTION_STRING_HEADER = "neon-connection-string";
/** Read-your-writes: a write's token is answered in this header, and a read may send it back in it. */
export const CONSISTENCY_TOKEN_HEADER = "x-poolgate-consistency-token";

/** The driver's isolation levels (its `isolationLevel` option) as PostgreSQL's. */
const ISOLATION_LEVELS: Record<string, Isolation> = {
  // PostgreSQL runs READ UNCOMMITTED as READ COMMITTED (https://www.postgresql.org/docs/current/transaction-iso.html).
  ReadUncommitted: "read committed",
  ReadCommitted: "read committed",
  RepeatableRead: "repeatable read",
  Serializable: "serializable",
};

export interface NeonRequestOptions {
  /** Rows as arrays in column order (else objects keyed by column name). */
  arrayMode: boolean;
  /** Values as PostgreSQL prints them (else as the gateway's JSON values). */
  rawTextOutput: boolean;
  isolation: Isolation | undefined;
  readOnly: boolean | undefined;
  deferrable: boolean | undefined;
  consistencyToken: string | undefined;
}

function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function flag(headers: IncomingHttpHeaders, name: string): boolean | undefined {
  const value = single(headers, name);
  if (value === undefined) return undefined;
  if (value === "true") return true;
  if (value === "false") return false;
  throw new GatewayError("INVALID_REQUEST", `invalid request: the ${name} header must be "true" or "false"`, { issues: [{ path: name, message: 'must be "true" or "false"' }] });
}

export function neonRequestOptions(headers: IncomingHttpHeaders): NeonRequestOptions {
  const level = single(headers, "neon-batch-isolation-level");
  const isolation = level === undefined ? undefined : ISOLATION_LEVELS[level];
  if (level !== undefined && isolation === undefined) {
    throw new GatewayError("INVALID_REQUEST", `invalid request: Neon-Batch-Isolation-Level must be one of ${Object.keys(ISOLATION_LEVELS).join(", ")}`, {
      issues: [{ path: "neon-batch-isolation-level", message: "unknown isolation level" }],
    });
  }
  const token = single(headers, CONSISTENCY_TOKEN_HEADER);
  return {
    arrayMode: flag(headers, "neon-array-mode") === true,
    rawTextOutput: flag(headers, "neon-raw-text-output") === true,
    isolation,
    readOnly: flag(headers, "neon-batch-read-only"),
    deferrable: flag(headers, "neon-batch-deferrable"),
    consistencyToken: token === undefined || token === "" ? undefined : token,
  };
}
