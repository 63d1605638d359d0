import { describe, expect, it } from "vitest";
import { compareLsn, isLsn } from "../engines/postgres/lsn.js";
import type { Engine } from "../engines/engine.js";
import type { GatewayError } from "../errors.js";
import { ManualClock } from "../clock.js";
import { EndpointRecord as Endpoint } from "../topology/endpoint-record.js";
import type { Topology } from "../topology/topology.js";
import { Router } from "./router.js";

/** Simulates a topology view: endpoints with the roles, health, lag and positions a test sets. */
class SettableTopology implements Topology {
  endpoints: Endpoint[] = [];
  signals: string[] = [];
  primary(): Endpoint | undefined {
    return this.endpoints.find((e) => e.healthy && e.role === "primary");
  }
  readReplicas(): Endpoint[] {
    return this.endpoints.filter((e) => e.servesReads);
  }
  waitForPrimary(): Promise<Endpoint | undefined> {
    return Promise.resolve(this.primary());
  }
  signalFailover(reason: string): void {
    this.signals.push(reason);
  }
  primaryLease(): AbortSignal {
    return new AbortController().signal;
  }
  checkAll(): Promise<void> {
    return Promise.resolve();
  }
  close(): void {}
}

const engine = { comparePositions: compareLsn, isPosition: isLsn } as unknown as Engine;

function endpoint(name: string, role: "primary" | "replica", position: string, lagMs = 0): Endpoint {
  const e = new Endpoint(name, `postgres://${name}/db`, role === "primary");
  e.role = role;
  e.healthy = true;
  e.position = position;
  e.lagMs = lagMs;
  e.appliedThroughAt = -lagMs;
  return e;
}

function setup() {
  const topology = new SettableTopology();
  const primary = endpoint("p", "primary", "0/500");
  const r1 = endpoint("r1", "replica", "0/400");
  const r2 = endpoint("r2", "replica", "0/500");
  topology.endpoints = [primary, r1, r2];
  const clock = new ManualClock(0);
  const router = new Router(topology, engine, { tokenWaitMs: 0, failoverWaitMs: 0 }, clock);
  return { topology, router, primary, r1, r2, clock };
}

describe("router", () => {
  it("sends writes to the primary and reads to the replica with the fewest requests in flight", async () => {
    const { router, primary, r1, r2 } = setup();
    expect(await router.route({ intent: "write", deadline: 1000 })).toBe(primary);
    r1.outstanding = 3;
    expect(await router.route({ intent: "read", deadline: 1000 })).toBe(r2);
    r2.outstanding = 5;
    expect(await router.route({ intent: "read", deadline: 1000 })).toBe(r1);
  });

  it("alternates between equally loaded replicas", async () => {
    const { router, r1, r2 } = setup();
    const picks = [];
    for (let i = 0; i < 4; i++) picks.push(await router.route({ intent: "read", deadline: 1000 }));
    expect(new Set(picks)).toEqual(new Set([r1, r2]));
  });

  it("serves a consistency token only from replicas past it, else from the primary", async () => {
    const { router, primary, r2 } = setup();
    expect(await router.route({ intent: "read", consistencyToken: "0/450", deadline: 1000 })).toBe(r2);
    expect(await router.route({ intent: "read", consistencyToken: "0/600", deadline: 1000 })).toBe(primary);
  });

  it("honours a staleness bound and skips banned replicas", async () => {
    const { router, primary, r1, r2 } = setup();
    r1.appliedThroughAt = -2000;
    expect(await router.route({ intent: "read", maxStalenessMs: 1000, deadline: 1000 })).toBe(r2);
    r2.banReason = "lag";
    expect(await router.route({ intent: "read", maxStalenessMs: 1000, deadline: 1000 })).toBe(primary);
  });

  it("checks a staleness bound at the moment of the read: a replica seen caught up 150 ms ago may be 150 ms behind now", async () => {
    const { router, primary, r1, r2, clock } = setup();
    r1.appliedThroughAt = 0;
    r2.appliedThroughAt = 0;
    expect([r1, r2]).toContain(await router.route({ intent: "read", maxStalenessMs: 100, deadline: 1000 }));
    clock.advance(150);
    expect(await router.route({ intent: "read", maxStalenessMs: 100, deadline: 1000 })).toBe(primary);
    r2.appliedThroughAt = 140;
    expect(await router.route({ intent: "read", maxStalenessMs: 100, deadline: 1000 })).toBe(r2);
  });

  it("keeps plain reads on replicas when no primary is known, and refuses writes after the wait", async () => {
    const { router, primary, r1, r2 } = setup();
    primary.healthy = false;
    r1.banReason = "lag";
    r2.banReason = "lag";
    expect([r1, r2]).toContain(await router.route({ intent: "read", deadline: 1000 }));
    const error = (await router.route({ intent: "write", deadline: 1000 }).catch((err: unknown) => err)) as GatewayError;
    expect(error.code).toBe("PRIMARY_UNAVAILABLE");
    expect(error.final).toBe(true);
  });

  it("chooses without waiting exactly where route would not wait, and the same endpoint", async () => {
    const { router, primary, r1, r2 } = setup();
    const requests = [
      { intent: "write" as const, deadline: 1000 },
      { intent: "read" as const, deadline: 1000 },
      { intent: "read" as const, consistencyToken: "0/450", deadline: 1000 },
      { intent: "read" as const, maxStalenessMs: 1000, deadline: 1000 },
    ];
    // Everything up: each choice is made at once, and is the one route makes (replicas alternate: compare by role).
    for (const request of requests) {
      expect(router.routeNow(request)?.role).toBe((await router.route(request)).role);
    }
    // A token no replica has replayed yet: the replicas may catch up, so route waits (then the primary).
    expect(router.routeNow({ intent: "read", consistencyToken: "0/600", deadline: 1000 })).toBeUndefined();
    expect(await router.route({ intent: "read", consistencyToken: "0/600", deadline: 1000 })).toBe(primary);
    // No primary: writes, and reads bound by staleness with no fresh replica, wait for one; plain reads go to a replica.
    primary.healthy = false;
    r1.appliedThroughAt = -2000;
    r2.appliedThroughAt = -2000;
    expect(router.routeNow({ intent: "write", deadline: 1000 })).toBeUndefined();
    expect(router.routeNow({ intent: "read", maxStalenessMs: 1000, deadline: 1000 })).toBeUndefined();
    expect([r1, r2]).toContain(router.routeNow({ intent: "read", deadline: 1000 }));
  });
});
