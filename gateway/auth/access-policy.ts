/**
 * Authorisation: what each principal may do, from `auth.principals`. A principal has access to
 * clusters (read-only or read-write; "*" for all), may be an operator (admin routes), and has its
 * share of the gateway (of each pool, of requests in flight, of statement time). Unknown principals
 * fall back to the "*" entry, else have no grants. With no authentication configured, the one
 * anonymous caller may do everything.
 */
import type { AuthConfig, GatewayConfig, PrincipalConfig } from "../config/schema.js";
import { type LoginChoice, loginFor } from "../credentials/logins.js";
import { GatewayError } from "../errors.js";
import type { RunAs } from "../execution/run-as.js";
import type { Caller } from "./caller.js";
import { normalizePrincipalKey } from "../aws/principal-arn.js";

export type Access = "read-only" | "read-write";

export interface PrincipalLimits {
  /** Fraction of each endpoint pool held at once. */
  share: number;
  /** Requests in the gateway at once. */
  maxInFlight: number;
}

const EVERYONE = "*";

export class AccessPolicy {
  private readonly principals = new Map<string, PrincipalConfig>();
  private readonly defaults: AuthConfig["defaults"];
  private readonly open: boolean;
  /** Per cluster: which logins besides the read-write one it has. */
  private readonly logins = new Map<string, LoginChoice>();

  constructor(config: GatewayConfig) {
    this.defaults = config.auth.defaults;
    this.open = config.auth.iam === undefined && config.auth.bearer === undefined;
    for (const [name, cluster] of Object.entries(config.clusters)) {
      if (cluster.logins === undefined) continue;
      this.logins.set(name, {
        readOnly: cluster.logins.readOnly !== undefined,
        principals: new Set(Object.keys(cluster.logins.principals).map(normalizePrincipalKey)),
      });
    }
    for (const [key, grants] of Object.entries(config.auth.principals)) {
      const principal = normalizePrincipalKey(key);
      if (this.principals.has(principal)) throw new Error(`auth.principals lists ${principal} twice (role paths are not part of a principal)`);
      this.principals.set(principal, grants);
    }
  }

  /** The access `caller` has to `cluster`; FORBIDDEN when none. */
  access(caller: Caller, cluster: string): Access {
    if (this.open) return "read-write";
    const grants = this.grantsOf(caller);
    const access = grants.clusters[cluster] ?? grants.clusters[EVERYONE];
    if (access === undefined) throw new GatewayError("FORBIDDEN", `principal ${caller.principal} has no access to cluster "${cluster}"`);
    return access;
  }

  /**
   * How work for `caller` on `cluster` runs: its pool tenant and shares, its database login (its own,
   * else the read-only login for read-only access, else the read-write one), read-only or not, its
   * timeout ceiling.
   */
  runAs(caller: Caller, cluster: string): RunAs {
    const readOnly = this.access(caller, cluster) === "read-only";
    const grants = this.open ? undefined : this.grantsOf(caller);
    return {
      tenant: caller.principal,
      share: grants?.maxPoolShare ?? this.defaults.maxPoolShare,
      transactionShare: grants?.maxTransactionShare ?? this.defaults.maxTransactionShare,
      login: loginFor(this.logins.get(cluster), caller.principal, readOnly),
      readOnly,
      maxTimeoutMs: grants?.maxTimeoutMs,
    };
  }

  /** Operator routes (/healthz, /v1/admin/...): admin principals only. */
  requireAdmin(caller: Caller): void {
    if (this.open) return;
    if (!this.grantsOf(caller).admin) throw new GatewayError("FORBIDDEN", `principal ${caller.principal} may not use the operator routes (auth.principals.<p>.admin)`);
  }

  limits(caller: Caller): PrincipalLimits {
    const grants = this.open ? undefined : this.principals.get(caller.principal) ?? this.principals.get(EVERYONE);
    return {
      share: grants?.maxPoolShare ?? this.defaults.maxPoolShare,
      maxInFlight: grants?.maxInFlight ?? this.defaults.maxInFlight,
    };
  }

  private grantsOf(caller: Caller): PrincipalConfig {
    const grants = this.principals.get(caller.principal) ?? this.principals.get(EVERYONE);
    if (!grants) throw new GatewayError("FORBIDDEN", `principal ${caller.principal} has no grants on this gateway (auth.principals)`);
    return grants;
  }
}
