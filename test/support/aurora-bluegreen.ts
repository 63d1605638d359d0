/**
 * An Aurora Blue/Green deployment on the Aurora PostgreSQL stand-in (aurora-standin.ts), and its
 * switchover as the Aurora User Guide describes it (docs/aurora.md, "Blue/Green switchover"):
 *
 * - the green environment copies the blue one's topology: a green writer that is a streaming standby
 *   of the blue writer (it replicates from blue), and a green reader per blue reader, cascading from it;
 * - the names the gateway connects to (the cluster endpoint, each instance's name) are TCP forwarders,
 *   the DNS stand-in of the stale-DNS suite;
 * - `switchover()` runs the steps of bluegreen-switchover.ts: writes stop on both environments (the
 *   blue writer turns read-only: `default_transaction_read_only`), every client session on both is
 *   dropped (`pg_terminate_backend`) and no new one is allowed (the names lead to a closed port), green
 *   catches up with blue (WAL replay position) and is promoted, green takes blue's names (the
 *   forwarders, and what `aurora_db_instance_identifier()` / `aurora_replica_status()` answer), blue is
 *   renamed `-old1` and stays read-only (until its writer reboots, which the stand-in never does), then
 *   connections are allowed again.
 *
 * `destroy()` stops the green servers, the forwarders and the sampler; the blue stand-in is the caller's.
 */
import { appendFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { AURORA_LOGIN, STANDIN_SCHEMA } from "./aurora-standin-sql.js";
import { asAurora, type AuroraInstance, type AuroraStandin, LagManager } from "./aurora-standin.js";
import { type BlueGreenDeployment, GREEN_SUFFIX, nameIn, OLD_SUFFIX, runSwitchover, type SwitchoverSteps } from "./bluegreen-switchover.js";
import { startStandbyOf } from "./pg-topology.js";
import { tempDirFor } from "./server-group.js";
import { startForwarder, type TcpForwarder } from "./tcp-forwarder.js";
import { waitFor } from "./wait-for.js";

/** The PostgreSQL stand-in's deployment: its instances are the stand-in's. */
export type PostgresBlueGreenDeployment = BlueGreenDeployment<AuroraInstance>;

/** Creates the green environment beside `blue` (already started) and the names that lead to blue. */
export async function createBlueGreenDeployment(blue: AuroraStandin): Promise<PostgresBlueGreenDeployment> {
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

    const steps: SwitchoverSteps = {
      names: () => forwarders,
      blockWrites: async () => {
        await blueWriter.query("ALTER SYSTEM SET default_transaction_read_only = on");
        await blueWriter.query("SELECT pg_reload_conf()");
      },
      dropSessions: async () => {
        for (const instance of [...blueInstances, ...green]) await dropClientSessions(instance);
      },
      catchUpAndPromote: async () => {
        const [{ lsn }] = (await blueWriter.query<{ lsn: string }>("SELECT pg_catalog.pg_current_wal_lsn()::text AS lsn")) as [{ lsn: string }];
        await waitFor(
          async () => (await greenWriter.query<{ caught: boolean }>("SELECT pg_catalog.pg_last_wal_replay_lsn() >= $1::pg_lsn AS caught", [lsn]))[0]?.caught === true,
          20000,
          "green to catch up with blue",
          5,
        );
        await greenWriter.promote();
        await waitFor(async () => (await greenWriter.query<{ r: boolean }>("SELECT pg_catalog.pg_is_in_recovery() AS r"))[0]?.r === false, 20000, "green writer promoted", 5);
      },
      rename: async () => {
        for (const [rank, instance] of blueInstances.entries()) {
          await renameInstance(instance, `${instance.name}${OLD_SUFFIX}`);
          await renameInstance(green[rank] as AuroraInstance, instance.name);
        }
        for (const [rank, reader] of green.slice(1).entries()) await renameReplication(reader, (blueInstances[rank + 1] as AuroraInstance).name);
        sampler = new LagManager(greenWriter);
        await sampler.start();
      },
      allowConnections: (options) => {
        cluster.repoint(options.staleClusterName === true ? blueWriter.port : greenWriter.port);
        for (const [rank, instance] of blueInstances.entries()) names.get(instance.name)?.repoint((green[rank] as AuroraInstance).port);
      },
    };

    return {
      cluster,
      names,
      green,
      name: (instanceName) => nameIn(names, instanceName),
      url: (name, database = "postgres") => `postgres://${AURORA_LOGIN}@127.0.0.1:${name.port}/${database}`,
      serverIdOf: async (instance) => (await instance.query<{ id: string }>(`SELECT current_setting('${STANDIN_SCHEMA}.server_id') AS id`))[0]?.id ?? "",
      switchover: (onEvent, options) => runSwitchover(steps, onEvent, options),
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
