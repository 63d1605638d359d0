/**
 * The authentication gate with caller authentication off: every request's caller is the anonymous
 * one without a hook per request, and no other caller can be put on a request by mistake.
 */
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { AccessPolicy } from "../auth/access-policy.js";
import type { Authenticator } from "../auth/authenticator.js";
import { ANONYMOUS } from "../auth/caller.js";
import { parseConfig } from "../config/load.js";
import { registerAuthentication } from "./authenticate.js";

/** An authenticator as the gateway builds it when no caller authentication is configured. */
const AUTHENTICATION_OFF = { enabled: false } as Authenticator;

describe("registerAuthentication with caller authentication off", () => {
  it("gives every request the anonymous caller, and refuses to put another on one", async () => {
    const app = Fastify();
    registerAuthentication(app, AUTHENTICATION_OFF, new AccessPolicy(parseConfig({ clusters: { default: { writerUrl: "postgres://127.0.0.1/test" } } })));
    app.get("/who", (request) => ({ principal: request.caller.principal, anonymous: request.caller === ANONYMOUS }));
    app.get("/reassign", (request) => {
      request.caller = ANONYMOUS;
      request.caller = { ...ANONYMOUS, principal: "someone-else" };
      return { principal: request.caller.principal };
    });
    expect((await app.inject({ url: "/who" })).json()).toEqual({ principal: ANONYMOUS.principal, anonymous: true });
    const reassigned = await app.inject({ url: "/reassign" });
    expect(reassigned.statusCode).toBe(500);
    expect(reassigned.json().message).toContain("someone-else");
    expect((await app.inject({ url: "/who" })).json()).toEqual({ principal: ANONYMOUS.principal, anonymous: true });
    await app.close();
  });
});
