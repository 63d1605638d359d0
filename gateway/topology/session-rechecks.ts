/**
 * After a role change, pooled sessions that may reach an instance of another role than their endpoint
 * now has are asked again before their next use. A promoted standby's sessions survive its promotion
 * and are good primary sessions; a session that still reaches the wrong role is replaced. An endpoint
 * whose check failed (role unknown) keeps its sessions: the dead ones die on their own.
 *
 * The topology knows no pool: it marks sessions through `SessionsToRecheck`, which the cluster wires
 * to its pools (pool.ts `verifyWhere`).
 */
import type { EngineConnection } from "../engines/engine.js";
import type { GatewayEvents } from "../events.js";
import type { Logger } from "../logger.js";
import type { Endpoint } from "./endpoint.js";
import type { TopologyMonitor } from "./monitor.js";

/** One pool of an endpoint, as far as re-checks go: mark the sessions that match; how many were marked. */
export interface RecheckablePool {
  verifyWhere(
    matches: (connection: EngineConnection) => boolean,
    verify: (connection: EngineConnection, timeoutMs: number) => Promise<boolean>,
    reason: string,
  ): number;
}

/** The pools (one per login) holding an endpoint's sessions. */
export type SessionsToRecheck = (endpoint: Endpoint) => Iterable<RecheckablePool>;

/** Subscribes the cluster's re-checks to its monitor's role changes on the hub; returns the unsubscriber. */
export function recheckSessionsOnRoleChange(
  cluster: string,
  hub: GatewayEvents,
  monitor: TopologyMonitor,
  endpoints: readonly Endpoint[],
  pools: SessionsToRecheck,
  logger: Logger,
): () => void {
  // The role of the instance a pooled session reached, as the monitor last saw that instance (by its
  // server id, Aurora), else as the session found it when it was opened.
  const sessionRole = (connection: EngineConnection) =>
    (connection.reachedServerId !== undefined ? monitor.roleOfInstance(connection.reachedServerId) : undefined) ?? connection.reachedRole;

  // Sessions that reached an instance of another role than the endpoint now has (opened through a
  // stale name during a failover, or before a role change).
  const offRole = hub.on("roleChange", ({ cluster: of, endpoint, previous }) => {
    const role = endpoint.role;
    if (of !== cluster || role === "unknown") return;
    const marked = recheck(endpoint, pools, (connection) => sessionRole(connection) !== role, `endpoint is now ${role}, the session is not`);
    if (marked > 0) logger.info({ endpoint: endpoint.name, from: previous, to: role, sessions: marked }, "endpoint role changed; its sessions are re-checked before use");
  });
  // An instance changed role (by its server id, Aurora): sessions that reach it through any name (a
  // reader name's sessions on the promoted reader, a cluster name's on the old writer) are asked
  // again before use, wherever the endpoint they were opened for now leads.
  const offInstance = hub.on("instanceRoleChange", ({ cluster: of, serverId, role, previous }) => {
    if (of !== cluster) return;
    let marked = 0;
    for (const endpoint of endpoints) {
      if (endpoint.role === "unknown" || endpoint.role === role) continue;
      marked += recheck(endpoint, pools, (connection) => connection.reachedServerId === serverId, `instance ${serverId} is now ${role}, the endpoint is ${endpoint.role}`);
    }
    logger.info({ serverId, from: previous, to: role, sessions: marked }, "instance changed role; sessions reaching it through other names are re-checked before use");
  });
  return () => {
    offRole();
    offInstance();
  };
}

/** Marks the endpoint's sessions that `matches` for a role check before their next use; how many. */
function recheck(endpoint: Endpoint, pools: SessionsToRecheck, matches: (connection: EngineConnection) => boolean, reason: string): number {
  const verify = async (connection: EngineConnection, timeoutMs: number) => {
    const state = await connection.inspect(timeoutMs);
    connection.reachedRole = state.role;
    connection.reachedServerId = state.serverId;
    return endpoint.role === "unknown" || connection.reachedRole === endpoint.role;
  };
  let marked = 0;
  for (const pool of pools(endpoint)) marked += pool.verifyWhere(matches, verify, reason);
  return marked;
}
