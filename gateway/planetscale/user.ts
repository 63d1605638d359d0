/**
 * PlanetScale's credentials: the driver sends `Authorization: Basic base64(username:password)` and
 * nothing else that names the database (its URL's path is not sent). Poolgate reads the username as
 * `<principal>@<cluster>` (percent-decoded: a URL's userinfo carries `@` as `%40`, which the driver
 * sends as it is) and the password as the principal's bearer token (auth/surface-credentials.ts).
 */
import type { IncomingHttpHeaders } from "node:http";
import { GatewayError } from "../errors.js";
import { basicCredentials, passwordAsBearer } from "../auth/surface-credentials.js";

export interface PlanetscaleUser {
  principal: string;
  cluster: string;
}

function invalid(message: string): GatewayError {
  return new GatewayError("INVALID_REQUEST", `invalid request: the Basic username ${message} (<principal>@<cluster>)`, {
    issues: [{ path: "authorization", message }],
  });
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw invalid("has a malformed percent-encoding");
  }
}

/** The principal and cluster the username names; never echoes the credential. */
export function planetscaleUser(headers: IncomingHttpHeaders): PlanetscaleUser {
  const credentials = basicCredentials(headers.authorization);
  if (credentials === undefined) throw invalid("is missing: send Authorization: Basic");
  const user = decoded(credentials.user);
  const at = user.lastIndexOf("@");
  if (at <= 0 || at === user.length - 1) throw invalid("names no cluster");
  return { principal: user.slice(0, at), cluster: user.slice(at + 1) };
}

/** The bearer credential the Basic password carries, for the authentication gate. */
export function planetscaleCredential(headers: IncomingHttpHeaders): string | undefined {
  return passwordAsBearer(basicCredentials(headers.authorization)?.password);
}
