/**
 * The `Neon-Connection-String` header: `postgresql://<user>:<password>@<host>/<database>`. Here the
 * database names the Poolgate cluster, the password is the caller's bearer token (a URL's password is
 * a credential like any other: keep the URL secret), and the user must be the principal that token
 * belongs to. Host, port and query parameters (the driver adds application_name) are not used.
 */
import type { IncomingHttpHeaders } from "node:http";
import { GatewayError } from "../errors.js";
import { passwordAsBearer } from "../auth/surface-credentials.js";
import { CONNECTION_STRING_HEADER } from "./request-headers.js";

export interface NeonConnectionString {
  user: string;
  /** The URL's password, decoded; undefined when it has none. */
  password: string | undefined;
  /** The Poolgate cluster. */
  database: string;
}

function invalid(message: string): GatewayError {
  return new GatewayError("INVALID_REQUEST", `invalid request: the Neon-Connection-String header ${message}`, {
    issues: [{ path: CONNECTION_STRING_HEADER, message }],
  });
}

function decoded(text: string, part: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw invalid(`has a malformed ${part}`);
  }
}

/** The header's parts; never echoes the header (it carries a credential). */
export function neonConnectionString(headers: IncomingHttpHeaders): NeonConnectionString {
  const raw = headers[CONNECTION_STRING_HEADER];
  const text = Array.isArray(raw) ? raw[0] : raw;
  if (text === undefined || text === "") throw invalid("is missing (postgresql://<principal>:<token>@<host>/<cluster>)");
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid("is not a URL");
  }
  if (url.protocol !== "postgresql:" && url.protocol !== "postgres:") throw invalid("is not a postgresql:// URL");
  // With an authority (//host), the URL class gives a postgresql: URL the pathname "/<database>".
  const database = decoded(url.pathname.replace(/^\//, ""), "database");
  if (database === "") throw invalid("names no database (the cluster)");
  return { user: decoded(url.username, "user"), password: url.password === "" ? undefined : decoded(url.password, "password"), database };
}

/**
 * The credential the connection string carries, for the authentication gate: `Bearer <password>`.
 * Undefined when the header is missing or has no password (the gate then says what to send).
 */
export function neonCredential(headers: IncomingHttpHeaders): string | undefined {
  try {
    return passwordAsBearer(neonConnectionString(headers).password);
  } catch {
    return undefined;
  }
}
