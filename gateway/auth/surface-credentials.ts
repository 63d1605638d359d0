/**
 * Credentials that clients of another protocol carry as a user and a password — Neon's connection
 * string, PlanetScale's HTTP Basic — mapped to Poolgate's one way for both surfaces: the password is
 * the caller's bearer token (`auth.bearer`) and the user names the principal that token belongs to.
 * A token under another principal's name is refused, so a pasted token cannot pass as someone else's
 * name in the logs. A request that also carries x-poolgate-auth or a gateway credential in
 * Authorization is authenticated by that instead, and the user is not checked.
 */
import type { FastifyRequest } from "fastify";
import { AUTH_HEADER } from "./authenticator.js";
import { GatewayError } from "../errors.js";

const BASIC = /^Basic ([A-Za-z0-9+/=]{1,1400})$/i;

/** HTTP Basic is no credential of the gateway's own: surfaces that accept it read it themselves. */
export function isBasicAuthorization(value: string): boolean {
  return /^Basic\s/i.test(value);
}

/** A user and password: from `Authorization: Basic base64(user:password)`, or undefined. */
export function basicCredentials(authorization: string | string[] | undefined): { user: string; password: string } | undefined {
  const value = Array.isArray(authorization) ? authorization[0] : authorization;
  const match = value === undefined ? null : BASIC.exec(value);
  if (match?.[1] === undefined) return undefined;
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The credential a password carries, for the authentication gate: `Bearer <password>`. */
export function passwordAsBearer(password: string | undefined): string | undefined {
  return password === undefined || password === "" ? undefined : `Bearer ${password}`;
}

/** Whether the request's caller was authenticated by the surface's user and password (not by a gateway header). */
function authenticatedByPassword(request: FastifyRequest): boolean {
  const authorization = request.headers.authorization;
  return request.headers[AUTH_HEADER] === undefined && (authorization === undefined || isBasicAuthorization(authorization));
}

/** The principal a password authenticated must be the user the request names beside it. */
export function checkUserIsPrincipal(request: FastifyRequest, user: string, where: string): void {
  const caller = request.caller;
  if (authenticatedByPassword(request) && caller.method === "bearer" && caller.principal !== user) {
    throw new GatewayError("UNAUTHENTICATED", `${where}'s password is a token of another principal than its user; put the principal's name as the user`);
  }
}
