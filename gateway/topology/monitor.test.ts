/**
 * The monitor's failover decisions over instances that answer on demand. A real server cannot miss
 * exactly one check while answering the next (a session cut by a proxy, this process stalled past
 * checkTimeoutMs on a loaded machine): `ScriptedInstances` simulates that, and only that; the
 * failover suites hold the monitor to real servers.
 */
import { describe, expect, it } from "vitest";
import { ManualClock } from "../clock.js";
import type { Engine, EngineConnection, InstanceState } from "../engines/engine.js";
import { silentLogger } from "../logger.js";
import { EndpointRecord as Endpoint } from "./endpoint-record.js";
import { TopologyMonitor } from "./monitor.js";

/** Instances by URL: the role each answers, or a missed check (the next `misses` questions go unanswered). */
class ScriptedInstances {
  readonly roles = new Map<string, InstanceState["role"] | "down">();
  readonly misses = new Map<string, number>();
  readonly asked = new Map<string, number>();

  engine(): Engine {
    const connect = (endpoint: { url: string }): Promise<EngineConnection> => {
      if (this.roles.get(endpoint.url) === "down") return Promise.reject(new Error("connect ECONNREFUSED"));
      let alive = true;
      const connection = {
        get alive() {
          return alive;
        },
        destroy: () => {
          alive = false;
        },
        inspect: () => this.inspect(endpoint.url),
      };
      return Promise.resolve(connection as unknown as EngineConnection);
    };
    const engine = { connect, describeConnectError: (err: unknown) => String(err), comparePositions: () => 0 };
    return engine as unknown as Engine;
  }

  private inspect(url: string): Promise<InstanceState> {
    this.asked.set(url, (this.asked.get(url) ?? 0) + 1);
    const misses = this.misses.get(url) ?? 0;
    if (misses > 0) {
      this.misses.set(url, misses - 1);
      return Promise.reject(new Error("no answer within 500ms"));
    }
    const role = this.roles.get(url);
    if (role === undefined || role === "down") return Promise.reject(new Error("connection lost"));
    return Promise.resolve({ role, position: null, replayAgeMs: role === "replica" ? 0 : null });
  }
}

function pairWith(instances: ScriptedInstances) {
  const writer = new Endpoint("default/writer", "writer", true);
  const reader = new Endpoint("default/reader1", "reader", false);
  instances.roles.set("writer", "primary");
  instances.roles.set("reader", "replica");
  const monitor = new TopologyMonitor([writer, reader], instances.engine(), { checkIntervalMs: 200, checkTimeoutMs: 500, maxReplicaLagMs: 5000 }, silentLogger, new ManualClock());
  return { writer, reader, monitor };
}

describe("the topology monitor", () => {
  it("records no failover when the primary misses one check and answers the next", async () => {
    const instances = new ScriptedInstances();
    const { writer, monitor } = pairWith(instances);
    await monitor.checkAll();
    expect(monitor.primary()).toBe(writer);
    instances.misses.set("writer", 1);
    await monitor.checkAll();
    expect(monitor.failovers).toEqual([]);
    expect(monitor.primary()).toBe(writer);
    // Asked again at once, not left for the next round.
    expect(instances.asked.get("writer")).toBe(3);
    monitor.close();
  });

  it("records no failover when a failover sign's check of the primary is missed and the next is answered", async () => {
    const instances = new ScriptedInstances();
    const { writer, monitor } = pairWith(instances);
    await monitor.checkAll();
    instances.misses.set("writer", 1);
    monitor.signalFailover("default/writer: connection lost", writer);
    // The sign's own check settles first (the scripted instances answer within a turn), then any round it asked for.
    await new Promise((resolve) => setImmediate(resolve));
    await monitor.checkAll();
    expect(monitor.failovers).toEqual([]);
    expect(monitor.primary()).toBe(writer);
    monitor.close();
  });

  it("fails over once when the primary dies and its standby is promoted: one record, from the writer to the reader", async () => {
    const instances = new ScriptedInstances();
    const { reader, monitor } = pairWith(instances);
    await monitor.checkAll();
    instances.roles.set("writer", "down");
    await monitor.checkAll();
    expect(monitor.primary()).toBeUndefined();
    instances.roles.set("reader", "primary");
    await monitor.checkAll();
    await monitor.checkAll();
    expect(monitor.primary()).toBe(reader);
    expect(monitor.failovers.map(({ oldPrimary, newPrimary }) => ({ oldPrimary, newPrimary }))).toEqual([{ oldPrimary: "default/writer", newPrimary: "default/reader1" }]);
    monitor.close();
  });

  it("fails over at once, without asking again, when the primary answers as a replica (demoted)", async () => {
    const instances = new ScriptedInstances();
    const { writer, monitor } = pairWith(instances);
    await monitor.checkAll();
    instances.roles.set("writer", "replica");
    await monitor.checkAll();
    expect(monitor.primary()).toBeUndefined();
    expect(monitor.failovers).toHaveLength(1);
    expect(monitor.failovers[0]?.reason).toMatch(/default\/writer unreachable or demoted \(answered as replica\)/);
    expect(instances.asked.get("writer")).toBe(2);
    expect(writer.role).toBe("replica");
    monitor.close();
  });
});

describe("the topology monitor on a writer that reports its readers' positions (Aurora)", () => {
  it("keeps a reader at the position the writer last reported while a round waits for the writer", async () => {
    // The writer reports reader1 at T100 in its first check, T200 in the next; the reader gives no position of its own.
    const writerAnswers: Promise<InstanceState>[] = [];
    let releaseWriter: (() => void) | undefined;
    const writerState = (readerAt: string): InstanceState => ({
      role: "primary",
      position: "T300",
      replayAgeMs: null,
      serverId: "writer1",
      readerPositions: new Map([["reader1", readerAt]]),
    });
    writerAnswers.push(Promise.resolve(writerState("T100")));
    writerAnswers.push(new Promise((resolve) => (releaseWriter = () => resolve(writerState("T200")))));
    let readerChecks = 0;
    const inspect = (url: string): Promise<InstanceState> => {
      if (url === "writer") return writerAnswers.shift() ?? Promise.reject(new Error("not scripted"));
      readerChecks++;
      return Promise.resolve({ role: "replica", position: null, replayAgeMs: 0, serverId: "reader1" });
    };
    const engine = {
      connect: (endpoint: { url: string }) => Promise.resolve({ alive: true, destroy: () => undefined, inspect: () => inspect(endpoint.url) }),
      describeConnectError: (err: unknown) => String(err),
      comparePositions: (a: string, b: string) => Number(a.slice(1)) - Number(b.slice(1)),
    } as unknown as Engine;
    const writer = new Endpoint("default/writer", "writer", true);
    const reader = new Endpoint("default/reader1", "reader", false);
    const monitor = new TopologyMonitor([writer, reader], engine, { checkIntervalMs: 200, checkTimeoutMs: 500, maxReplicaLagMs: 5000 }, silentLogger, new ManualClock());
    await monitor.checkAll();
    expect(reader.position).toBe("T100");
    const round = monitor.checkAll();
    // The reader's check answers; the writer's is still out.
    while (readerChecks < 2) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(reader.position).toBe("T100");
    releaseWriter?.();
    await round;
    expect(reader.position).toBe("T200");
    monitor.close();
  });
});
