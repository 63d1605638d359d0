import { describe, expect, it } from "vitest";
import { parseConfig } from "../config/load.js";
import { GatewayError } from "../errors.js";
import { AccessPolicy } from "./access-policy.js";
import { ANONYMOUS, type Caller } from "./caller.js";

const clusters = { app: { writerUrl: "postgres://u@db:5432/app" }, reports: { writerUrl: "postgres://u@db:5432/reports" } };
const role = (name: string): Caller => ({ principal: `arn:aws:iam::123456789012:role/${name}`, method: "iam" });

function policy(principals: Record<string, unknown>, defaults: Record<string, unknown> = {}): AccessPolicy {
  return new AccessPolicy(
    parseConfig({ clusters, defaultCluster: "app", auth: { iam: { audience: "poolgate", regions: ["us-east-1"], accounts: ["123456789012"] }, principals, defaults } }),
  );
}

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe("FORBIDDEN");
    return (err as GatewayError).message;
  }
  throw new Error("expected FORBIDDEN");
}

describe("access policy", () => {
  it("grants per cluster, with * for the others, read-only or read-write", () => {
    const rules = policy({ "arn:aws:iam::123456789012:role/api": { clusters: { app: "read-write", "*": "read-only" } } });
    expect(rules.access(role("api"), "app")).toBe("read-write");
    expect(rules.access(role("api"), "reports")).toBe("read-only");
    expect(rules.runAs(role("api"), "reports")).toMatchObject({ tenant: "arn:aws:iam::123456789012:role/api", readOnly: true, share: 1 });
  });

  it("refuses principals without an entry, and clusters without a grant", () => {
    const rules = policy({ "arn:aws:iam::123456789012:role/api": { clusters: { app: "read-write" } } });
    expect(refusal(() => rules.access(role("other"), "app"))).toContain("has no grants");
    expect(refusal(() => rules.access(role("api"), "reports"))).toContain('no access to cluster "reports"');
  });

  it("matches a configured role ARN with a path to the assumed role, which carries none", () => {
    const rules = policy({ "arn:aws:iam::123456789012:role/service-role/api": { clusters: { app: "read-only" } } });
    expect(rules.access(role("api"), "app")).toBe("read-only");
  });

  it("falls back to * for any authenticated principal", () => {
    const rules = policy({ "*": { clusters: { app: "read-only" } }, "arn:aws:iam::123456789012:role/admin": { admin: true } });
    expect(rules.access(role("anyone"), "app")).toBe("read-only");
    expect(() => rules.requireAdmin(role("admin"))).not.toThrow();
    expect(refusal(() => rules.requireAdmin(role("anyone")))).toContain("operator routes");
  });

  it("applies each principal's share, in-flight and timeout limits, else the defaults", () => {
    const rules = policy(
      { "arn:aws:iam::123456789012:role/batch": { clusters: { "*": "read-write" }, maxPoolShare: 0.25, maxInFlight: 5, maxTimeoutMs: 1000 }, "*": { clusters: { "*": "read-write" } } },
      { maxPoolShare: 0.5, maxInFlight: 50 },
    );
    expect(rules.limits(role("batch"))).toEqual({ share: 0.25, maxInFlight: 5 });
    expect(rules.runAs(role("batch"), "app")).toMatchObject({ share: 0.25, maxTimeoutMs: 1000 });
    expect(rules.limits(role("other"))).toEqual({ share: 0.5, maxInFlight: 50 });
  });

  it("refuses two entries that name the same principal", () => {
    expect(() => policy({ "arn:aws:iam::123456789012:role/a/api": {}, "arn:aws:iam::123456789012:role/b/api": {} })).toThrow(/twice/);
  });

  it("lets the anonymous caller do everything when no authentication is configured", () => {
    const open = new AccessPolicy(parseConfig({ clusters, defaultCluster: "app" }));
    expect(open.access(ANONYMOUS, "reports")).toBe("read-write");
    expect(() => open.requireAdmin(ANONYMOUS)).not.toThrow();
  });
});
