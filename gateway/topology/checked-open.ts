/**
 * A new pooled session is asked what it reached before it is used: a name that still leads to the old
 * writer, or a writer name that now leads to a replica (a stale DNS answer after a failover, Aurora's
 * cluster endpoint moving), is closed and told to the topology, instead of serving read-only errors.
 */
import type { DatabaseCredentials } from "../credentials/database-credentials.js";
import type { Engine, EngineConnection } from "../engines/engine.js";
import type { Endpoint } from "./endpoint.js";
import type { Topology } from "./topology.js";

/** Opens a session to the endpoint and checks the role of the instance it reached against the endpoint's. */
export async function openChecked(
  engine: Engine,
  topology: Topology,
  endpoint: Endpoint,
  credentials: DatabaseCredentials | undefined,
  connectTimeoutMs: number,
): Promise<EngineConnection> {
  const connection = await engine.connect({ url: endpoint.url, credentials }, connectTimeoutMs);
  try {
    const state = await connection.inspect(connectTimeoutMs);
    connection.reachedRole = state.role;
    connection.reachedServerId = state.serverId;
    // A name that still leads to the writer (a reader name, round-robin, before its DNS moved) is
    // not the reader the endpoint stands for: the instance is the primary's, by its own server id.
    const primary = topology.primary();
    if (endpoint.role === "replica" && state.role === "primary" && primary !== undefined && primary !== endpoint && state.serverId !== undefined && primary.serverId === state.serverId) {
      throw new Error(`${endpoint.name} reached the primary's instance ${state.serverId} where a reader was expected (a name not moved yet)`);
    }
    if (endpoint.role === "primary" && state.role === "replica") {
      topology.signalFailover(`${endpoint.name} now reaches a replica, not a primary`, endpoint);
      throw new Error(`${endpoint.name} reached a replica where a primary was expected`);
    }
    // A replica endpoint that reaches a primary was promoted (or its name moved): reads may run
    // there, and the monitor looks now so that the promotion is known.
    if (endpoint.role === "replica" && state.role === "primary") void topology.checkAll();
  } catch (err) {
    connection.destroy();
    throw err;
  }
  return connection;
}
