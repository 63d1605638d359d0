/**
 * An Aurora Blue/Green deployment on the Aurora MySQL stand-in (aurora-mysql-standin.ts), switched over
 * by the steps of bluegreen-switchover.ts (the User Guide's order, shared with the PostgreSQL stand-in):
 *
 * - green is a second stand-in topology: its writer replicates from blue's writer by GTID (read-only
 *   until promoted), a green reader per blue reader cascades from it; its instances answer
 *   `<blue name>-green-abc123` as @@aurora_server_id until the switchover;
 * - the names the gateway connects to (the cluster endpoint, each blue instance's name) are Aurora
 *   wire forwarders (aurora-mysql-wire.ts) whose target, and the @@aurora_server_id they answer, move;
 * - the switchover: blue's writer turns read-only (`read_only`, which binds the login: it has no
 *   SUPER), every session of the gateway's login on both environments is killed and the names lead
 *   to a closed port, green's writer waits for blue's last GTID (MASTER_GTID_WAIT) and is promoted,
 *   green takes blue's names (its instances and its status table answer `primary`, `replica1`, ...),
 *   blue's instances answer `-old1` and blue stays read-only, then the names lead to green.
 *
 * `destroy()` stops green and the names; the blue stand-in is the caller's.
 */
import mysql from "mysql2/promise";
import { type AuroraWire, startAuroraWire } from "./aurora-mysql-wire.js";
import { AURORA_MYSQL_LOGIN, type AuroraMysqlInstance, type AuroraMysqlStandin, startAuroraMysqlStandin } from "./aurora-mysql-standin.js";
import { type BlueGreenDeployment, GREEN_SUFFIX, nameIn, OLD_SUFFIX, runSwitchover, type SwitchoverName, type SwitchoverSteps } from "./bluegreen-switchover.js";

export type MysqlBlueGreenDeployment = BlueGreenDeployment<AuroraMysqlInstance>;

/** What aurora_version() answers through the names (the stand-in's default). */
const AURORA_VERSION = "3.08.0";
/** How long green's writer may take to apply what blue committed before the block, s. */
const CATCH_UP_TIMEOUT_S = 20;

/** Creates the green environment beside `blue` (already started) and the names that lead to blue. */
export async function createMysqlBlueGreenDeployment(blue: AuroraMysqlStandin): Promise<MysqlBlueGreenDeployment> {
  const blueWriter = blue.primary;
  const names = new Map<string, SwitchoverName>();
  const wires: AuroraWire[] = [];
  let green: AuroraMysqlStandin | undefined;
  const destroy = async () => {
    for (const wire of wires) await wire.close();
    await green?.destroy();
  };
  try {
    green = await startAuroraMysqlStandin({ readerCount: blue.replicas.length, replicateFrom: blueWriter, serverIdOf: (name) => `${name}${GREEN_SUFFIX}` });
    const greenEnv = green;
    const both = () => [...blue.all(), ...greenEnv.all()];
    // A name answers as the instance it leads to is named when it is repointed (a closed port: as before).
    const nameOf = async (instance: AuroraMysqlInstance): Promise<SwitchoverName> => {
      const wire = await startAuroraWire(instance.port, { serverId: instance.serverId, version: AURORA_VERSION });
      wires.push(wire);
      return { port: wire.port, repoint: (port) => wire.repoint(port, both().find((target) => target.port === port)?.serverId) };
    };
    const cluster = await nameOf(blueWriter);
    for (const instance of blue.all()) names.set(instance.serverId, await nameOf(instance));

    const steps: SwitchoverSteps = {
      names: () => [cluster, ...names.values()],
      blockWrites: async () => {
        await blueWriter.query("SET GLOBAL read_only = 1");
      },
      dropSessions: async () => {
        for (const instance of both()) await killLoginSessions(instance);
      },
      catchUpAndPromote: async () => {
        const [row] = await blueWriter.query<{ pos: string }>("SELECT @@global.gtid_binlog_pos AS pos");
        const [waited] = await greenEnv.primary.query<{ r: number | null }>("SELECT MASTER_GTID_WAIT(?, ?) AS r", [row?.pos ?? "", CATCH_UP_TIMEOUT_S]);
        if (Number(waited?.r) !== 0) throw new Error(`green's writer did not reach blue's position ${row?.pos} within ${CATCH_UP_TIMEOUT_S} s`);
        await greenEnv.primary.promote();
      },
      rename: async () => {
        await blue.rename((name) => `${name}${OLD_SUFFIX}`);
        await greenEnv.rename((name) => name);
      },
      allowConnections: (options) => {
        cluster.repoint(options.staleClusterName === true ? blueWriter.port : greenEnv.primary.port);
        for (const instance of greenEnv.all()) names.get(instance.serverId)?.repoint(instance.port);
      },
    };

    return {
      cluster,
      names,
      green: greenEnv.all(),
      name: (instanceName) => nameIn(names, instanceName),
      url: (name, database = "test") => `mysql://${AURORA_MYSQL_LOGIN.user}:${AURORA_MYSQL_LOGIN.password}@127.0.0.1:${name.port}/${database}`,
      serverIdOf: async (instance) => {
        // Asked as the gateway asks, through the instance's own forwarder.
        const [row] = await queryAsLogin<{ id: string }>(instance.url(), "SELECT @@aurora_server_id AS id");
        return row?.id ?? "";
      },
      switchover: (onEvent, options) => runSwitchover(steps, onEvent, options),
      destroy,
    };
  } catch (err) {
    await destroy();
    throw err;
  }
}

/** Kills every session of the gateway's login on the instance (replication and the stand-in's own sessions are root's). */
async function killLoginSessions(instance: AuroraMysqlInstance): Promise<void> {
  const sessions = await instance.query<{ id: number }>("SELECT ID AS id FROM information_schema.PROCESSLIST WHERE USER = ?", [AURORA_MYSQL_LOGIN.user]);
  for (const { id } of sessions) await instance.query(`KILL CONNECTION ${Number(id)}`).catch(() => undefined);
}

/** One statement as the gateway's login, on a session of its own. */
async function queryAsLogin<T>(url: string, sql: string): Promise<T[]> {
  const session = await mysql.createConnection(url);
  try {
    const [rows] = await session.query(sql);
    return rows as T[];
  } finally {
    await session.end();
  }
}
