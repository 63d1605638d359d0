/**
 * An Aurora Blue/Green deployment on the Aurora PostgreSQL stand-in (aurora-standin.ts), and its
 * switchover as the Aurora User Guide describes it (docs/aurora.md, "Blue/Green switchover"):
 *
 * - the green environment copies the blue one's topology: a green writer that is a streaming standby
 *   of the blue writer (it replicates from blue), and a green reader per blue reader, cascading from it;
 * - the names the gateway connects to (the cluster endpoint, each instance's name) are TCP forwarders,
 *   the DNS stand-in of the stale-DNS suite;
 * - `switchover()`: writes stop on both environments (the blue writer turns read-only), every client
 *   session on both is dropped and no new one is allowed (the names lead to a closed port), green
 *   catches up with blue and is promoted, green takes blue's names (the forwarders, and what
 *   `aurora_db_instance_identifier()` / `aurora_replica_status()` answer), blue is renamed `-old1` and
 *   stays read-only (until its writer reboots, which the stand-in never does), then connections are
 *   allowed again. It tells the RDS events of a switchover as they would be sent (0259, then 0260).
 *
 * `destroy()` stops the green servers, the forwarders and the sampler; the blue stand-in is the caller's.
 */
import { appendFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { AURORA_LOGIN, STANDIN_SCHEMA } from "./aurora-standin-sql.js";
import { asAurora, type AuroraInstance, type AuroraStandin, LagManager } from "./aurora-standin.js";
import { startStandbyOf } from "./pg-topology.js";
import { unusedPort } from "./ports.js";
import { tempDirFor } from "./server-group.js";
import { startForwarder, type TcpForwarder } from "./tcp-forwarder.js";
import { waitFor } from "./wait-for.js";

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

export interface BlueGreenDeployment {
  /** The cluster endpoint's name (a forwarder): blue's writer before the switchover, green's after. */
  readonly cluster: TcpForwarder;
  /** Each blue instance's name (a forwarder), by that name: green's instance of the same rank after. */
  readonly names: ReadonlyMap<string, TcpForwarder>;
  /** Green's instances, writer first, by their own (data directory) names. */
  readonly green: readonly AuroraInstance[];
  /** The name of blue's instance `instanceName` (throws for a name blue has not). */
  name(instanceName: string): TcpForwarder;
  /** The gateway's login URL through a name. */
  url(name: TcpForwarder, database?: string): string;
  /** What aurora_db_instance_identifier() answers on an instance now. */
  serverIdOf(instance: AuroraInstance): Promise<string>;
  /** Runs the switchover; `onEvent` hears the RDS events as they would be sent. */
  switchover(onEvent?: (event: SwitchoverEvent) => void | Promise<void>, options?: SwitchoverOptions): Promise<SwitchoverTimes>;
  destroy(): Promise<void>;
}

/** Green instance names as RDS makes them: the blue name and a suffix. */
const GREEN_SUFFIX = "-green-abc123";

/** Creates the green environment beside `blue` (already started) and the names that lead to blue. */
export async function createBlueGreenDeployment(blue: AuroraStandin): Promise<BlueGreenDeployment> {
  const root = tempDirFor("postgres", "poolgate-green-");
  const blueInstances = blue.all();
  const green: AuroraInstance[] = [];
  const forwarders: TcpForwarder[] = [];
  let sampler: LagManager | undefined;
  const destroy = async () => {
    await sampler?.stop();
    for (const forwarder of forwarders) await forwarder.close();
    for (const instance of green) await instance.stop("immediate");
    rmSync(root, { recursive: true, force: true });
  };
  try {
    const [blueWriter] = blueInstances as [AuroraInstance];
    const greenWriter = asAurora(await startStandbyOf(blueWriter, `${blueWriter.name}${GREEN_SUFFIX}`, join(root, "writer")));
    green.push(greenWriter);
    for (const reader of blueInstances.slice(1)) {
      green.push(asAurora(await startStandbyOf(blueWriter, `${reader.name}${GREEN_SUFFIX}`, join(root, reader.name), greenWriter)));
    }
    for (const instance of green) await renameInstance(instance, instance.name);
    const cluster = await startForwarder(blueWriter.port);
    forwarders.push(cluster);
    const names = new Map<string, TcpForwarder>();
    for (const instance of blueInstances) {
      const name = await startForwarder(instance.port);
      forwarders.push(name);
      names.set(instance.name, name);
    }

    const switchover = async (onEvent: (event: SwitchoverEvent) => void | Promise<void> = () => undefined, options: SwitchoverOptions = {}): Promise<SwitchoverTimes> => {
      await onEvent("RDS-EVENT-0259");
      // Writes stop on both environments; every session is dropped and no new one gets through.
      const closed = await unusedPort();
      for (const name of forwarders) name.repoint(closed);
      await blueWriter.query("ALTER SYSTEM SET default_transaction_read_only = on");
      await blueWriter.query("SELECT pg_reload_conf()");
      for (const instance of [...blueInstances, ...green]) await dropClientSessions(instance);
      const blockedAt = performance.now();
      // Green catches up with everything blue committed, then takes writes.
      const [{ lsn }] = (await blueWriter.query<{ lsn: string }>("SELECT pg_catalog.pg_current_wal_lsn()::text AS lsn")) as [{ lsn: string }];
      await waitFor(
        async () => (await greenWriter.query<{ caught: boolean }>("SELECT pg_catalog.pg_last_wal_replay_lsn() >= $1::pg_lsn AS caught", [lsn]))[0]?.caught === true,
        20000,
        "green to catch up with blue",
        5,
      );
      await greenWriter.promote();
      await waitFor(async () => (await greenWriter.query<{ r: boolean }>("SELECT pg_catalog.pg_is_in_recovery() AS r"))[0]?.r === false, 20000, "green writer promoted", 5);
      // Green takes blue's names, blue is renamed -old1 (and stays read-only).
      for (const [rank, instance] of blueInstances.entries()) {
        await renameInstance(instance, `${instance.name}-old1`);
        await renameInstance(green[rank] as AuroraInstance, instance.name);
      }
      for (const [rank, reader] of green.slice(1).entries()) await renameReplication(reader, (blueInstances[rank + 1] as AuroraInstance).name);
      sampler = new LagManager(greenWriter);
      await sampler.start();
      // Connections are allowed again, to green under blue's names.
      cluster.repoint(options.staleClusterName === true ? blueWriter.port : greenWriter.port);
      for (const [rank, instance] of blueInstances.entries()) names.get(instance.name)?.repoint((green[rank] as AuroraInstance).port);
      const endedAt = performance.now();
      await onEvent("RDS-EVENT-0260");
      return { blockedAt, endedAt };
    };

    return {
      cluster,
      names,
      green,
      name: (instanceName) => {
        const name = names.get(instanceName);
        if (!name) throw new Error(`blue has no instance ${instanceName}`);
        return name;
      },
      url: (name, database = "postgres") => `postgres://${AURORA_LOGIN}@127.0.0.1:${name.port}/${database}`,
      serverIdOf: async (instance) => (await instance.query<{ id: string }>(`SELECT current_setting('${STANDIN_SCHEMA}.server_id') AS id`))[0]?.id ?? "",
      switchover,
      destroy,
    };
  } catch (err) {
    await destroy();
    throw err;
  }
}

/** What aurora_db_instance_identifier() answers from now on (the last setting in postgresql.conf wins). */
async function renameInstance(instance: AuroraInstance, serverId: string): Promise<void> {
  appendFileSync(join(instance.dataDir, "postgresql.conf"), `${STANDIN_SCHEMA}.server_id = '${serverId}'\n`);
  await instance.query("SELECT pg_reload_conf()");
}

/** The name a green reader's row has in its writer's aurora_replica_status() (its walreceiver's application_name). */
async function renameReplication(reader: AuroraInstance, serverId: string): Promise<void> {
  const [{ conninfo }] = (await reader.query<{ conninfo: string }>("SELECT current_setting('primary_conninfo') AS conninfo")) as [{ conninfo: string }];
  await reader.query(`ALTER SYSTEM SET primary_conninfo = '${conninfo.replace(/application_name=\S+/, `application_name=${serverId}`)}'`);
  await reader.query("SELECT pg_reload_conf()");
}

/** Drops every client session (not replication) on the instance, as the switchover does. */
async function dropClientSessions(instance: AuroraInstance): Promise<void> {
  await instance.query("SELECT count(pg_catalog.pg_terminate_backend(pid)) FROM pg_catalog.pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_catalog.pg_backend_pid()");
}
