/**
 * An Aurora Blue/Green switchover as the Aurora User Guide describes it (docs/aurora.md, "Blue/Green
 * switchover"; <https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/blue-green-deployments-switching.html>,
 * "Switchover actions"), in the one order both engines' stand-ins follow: writes stop on both
 * environments and every session is dropped with no new one allowed, green catches up with blue and
 * is promoted, green takes blue's names and blue is renamed `-old1` (and stays read-only), then
 * connections are allowed again. It tells the RDS events as they would be sent (0259, then 0260).
 *
 * Each engine's stand-in says how it does each step (aurora-bluegreen.ts for PostgreSQL,
 * aurora-mysql-bluegreen.ts for MySQL); the deployment a test drives has the same shape on both.
 */
import { unusedPort } from "./ports.js";

/** The RDS events a cluster's switchover sends (Aurora User Guide, blue/green deployment events). */
export type SwitchoverEvent = "RDS-EVENT-0259" | "RDS-EVENT-0260";

/** When the switchover's steps happened (performance.now() ms). */
export interface SwitchoverTimes {
  /** Writes stopped and sessions dropped on both environments. */
  blockedAt: number;
  /** Green's names and connections allowed again: the switchover has ended. */
  endedAt: number;
}

export interface SwitchoverOptions {
  /**
   * The cluster endpoint's name still leads to blue's writer (now `-old1`, read-only) after the
   * switchover, as a DNS answer cached past the rename would: the caller repoints it later.
   */
  staleClusterName?: boolean;
}

/** A name the gateway connects to (the DNS stand-in): a forwarder whose target moves. */
export interface SwitchoverName {
  readonly port: number;
  repoint(targetPort: number): void;
}

/** One engine's way of doing each step of the switchover. */
export interface SwitchoverSteps {
  /** Every name (the cluster's, each instance's) the switchover closes while it runs. */
  names(): readonly SwitchoverName[];
  /** Blue's writer refuses writes from now on (it stays so after the switchover). */
  blockWrites(): Promise<void>;
  /** Drops every client session (not replication) on every instance of both environments. */
  dropSessions(): Promise<void>;
  /** Waits for green's writer to have everything blue committed, then lets it take writes. */
  catchUpAndPromote(): Promise<void>;
  /** Green takes blue's identifiers, blue becomes `-old1`; each environment's status tables follow. */
  rename(): Promise<void>;
  /** Points the names at green (the cluster's at blue's old writer when `staleClusterName`). */
  allowConnections(options: SwitchoverOptions): void;
}

/**
 * A Blue/Green deployment on a stand-in. `I` is the engine's instance (its `port` is the server's own).
 */
export interface BlueGreenDeployment<I extends { readonly port: number } = { readonly port: number }> {
  /** The cluster endpoint's name (a forwarder): blue's writer before the switchover, green's after. */
  readonly cluster: SwitchoverName;
  /** Each blue instance's name (a forwarder), by that name: green's instance of the same rank after. */
  readonly names: ReadonlyMap<string, SwitchoverName>;
  /** Green's instances, writer first. */
  readonly green: readonly I[];
  /** The name of blue's instance `instanceName` (throws for a name blue has not). */
  name(instanceName: string): SwitchoverName;
  /** The gateway's login URL through a name. */
  url(name: SwitchoverName, database?: string): string;
  /** What the instance answers as its Aurora identifier now (aurora_db_instance_identifier(), @@aurora_server_id). */
  serverIdOf(instance: I): Promise<string>;
  /** Runs the switchover; `onEvent` hears the RDS events as they would be sent. */
  switchover(onEvent?: (event: SwitchoverEvent) => void | Promise<void>, options?: SwitchoverOptions): Promise<SwitchoverTimes>;
  destroy(): Promise<void>;
}

/** Runs the switchover's steps in the User Guide's order. */
export async function runSwitchover(
  steps: SwitchoverSteps,
  onEvent: (event: SwitchoverEvent) => void | Promise<void> = () => undefined,
  options: SwitchoverOptions = {},
): Promise<SwitchoverTimes> {
  await onEvent("RDS-EVENT-0259");
  // Writes stop on both environments; every session is dropped and no new one gets through.
  const closed = await unusedPort();
  for (const name of steps.names()) name.repoint(closed);
  await steps.blockWrites();
  await steps.dropSessions();
  const blockedAt = performance.now();
  await steps.catchUpAndPromote();
  await steps.rename();
  steps.allowConnections(options);
  const endedAt = performance.now();
  await onEvent("RDS-EVENT-0260");
  return { blockedAt, endedAt };
}

/** The name of blue's instance `instanceName` in `names`, or a readable error. */
export function nameIn(names: ReadonlyMap<string, SwitchoverName>, instanceName: string): SwitchoverName {
  const name = names.get(instanceName);
  if (!name) throw new Error(`blue has no instance ${instanceName}`);
  return name;
}

/** Green instance names as RDS makes them: the blue name and a suffix. */
export const GREEN_SUFFIX = "-green-abc123";
/** What RDS renames blue's instances to at the switchover. */
export const OLD_SUFFIX = "-old1";
