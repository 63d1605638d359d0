/**
 * The authentication gate, before any body is read: every route declares its access in its config —
 * `public` (readiness, the OpenAPI document), `operator` (admin principals only) or `caller` (the
 * default, unknown paths included) — and the caller found is attached to the request for the routes'
 * authorisation. Each principal has at most `maxInFlight` requests in the gateway at once.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AccessPolicy } from "../auth/access-policy.js";
import { AUTH_HEADER, type Authenticator } from "../auth/authenticator.js";
import { ANONYMOUS, type Caller } from "../auth/caller.js";
import { GatewayError } from "../errors.js";
import { isBasicAuthorization } from "../auth/surface-credentials.js";
import { endWith } from "../tracing/request-trace.js";

export type RouteAccess = "public" | "operator" | "caller";

declare module "fastify" {
  interface FastifyRequest {
    /** Who sent the request (set before any handler runs). */
    caller: Caller;
  }
  interface FastifyContextConfig {
    access?: RouteAccess;
    /** The Data API surface: Authorization carries the AWS SDK's SigV4 signature there, not a credential. */
    dataApi?: boolean;
    /**
     * A surface whose clients carry their credential elsewhere (Neon's: the connection string's
     * password; PlanetScale's: HTTP Basic): read when neither x-poolgate-auth nor a gateway credential
     * in Authorization is sent (auth/surface-credentials.ts).
     */
    credentialOf?: (headers: FastifyRequest["headers"]) => string | undefined;
  }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === "string" ? value : undefined;
}

export function registerAuthentication(app: FastifyInstance, authenticator: Authenticator, policy: AccessPolicy): void {
  if (!authenticator.enabled) {
    // One trusted caller on loopback: every request's caller is the anonymous one, read through the
    // requests' prototype, so nothing is set (and no hook runs) per request. Only it may be assigned.
    app.decorateRequest("caller", {
      getter: () => ANONYMOUS,
      setter: (caller: Caller) => {
        if (caller !== ANONYMOUS) throw new Error(`caller ${caller.principal} assigned with caller authentication off`);
      },
    });
    return;
  }
  const inFlight = new Map<string, number>();
  // Fastify wants reference-type decorations to start as null; the hook below sets one on every request.
  app.decorateRequest("caller", null as unknown as Caller);

  const admit = (caller: Caller, reply: FastifyReply): void => {
    const { maxInFlight } = policy.limits(caller);
    const count = inFlight.get(caller.principal) ?? 0;
    if (count >= maxInFlight) {
      throw new GatewayError("THROTTLED", `principal ${caller.principal} already has ${count} requests in flight (maxInFlight=${maxInFlight})`, { retryAfterS: 1 });
    }
    inFlight.set(caller.principal, count + 1);
    // 'close' comes once the answer is sent, or when the client went away first.
    reply.raw.once("close", () => {
      const left = (inFlight.get(caller.principal) ?? 1) - 1;
      if (left > 0) inFlight.set(caller.principal, left);
      else inFlight.delete(caller.principal);
    });
  };

  app.addHook("onRequest", async (request, reply) => {
    const config = request.routeOptions.config;
    const access = config.access ?? "caller";
    request.caller = ANONYMOUS;
    if (access === "public") return;
    const poolgateAuth = header(request, AUTH_HEADER);
    const sent = config.dataApi ? undefined : header(request, "authorization");
    const authorization = sent !== undefined && isBasicAuthorization(sent) ? undefined : sent;
    const span = request.trace?.child("poolgate.authenticate");
    const authenticated = authenticator.authenticate({
      poolgateAuth: poolgateAuth ?? (authorization === undefined ? config.credentialOf?.(request.headers) : undefined),
      authorization,
    });
    const caller = await (span === undefined ? authenticated : endWith(span, authenticated, (found, ended) => ended.setAttribute("enduser.id", found.principal)));
    request.caller = caller;
    if (access === "operator") policy.requireAdmin(caller);
    admit(caller, reply);
  });
}
