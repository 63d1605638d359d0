/**
 * An Aurora MySQL stand-in: the machine's MariaDB primary and GTID replicas (mariadb-topology.ts)
 * showing Aurora MySQL's documented surface (docs/aurora.md) to the gateway's login through a
 * rewriting forwarder per instance (aurora-mysql-wire.ts):
 *
 * - `information_schema.replica_host_status` (SERVER_ID, SESSION_ID with 'MASTER_SESSION_ID' for the
 *   writer, REPLICA_LAG_IN_MILLISECONDS, LAST_UPDATE_TIMESTAMP), kept by a lag manager that measures
 *   each reader's real apply lag: every few ms it stamps the writer's time into a heartbeat row, reads
 *   on each reader the newest stamp it has applied, and records lag = the reader's time - that stamp
 *   with the reader's time as LAST_UPDATE_TIMESTAMP. A reader that applied stamp `h` has applied every
 *   write that committed before `h` (replication applies in commit order), so the writer's
 *   `LAST_UPDATE_TIMESTAMP - REPLICA_LAG_IN_MILLISECONDS` for it never overstates its progress;
 * - `@@aurora_server_id` and `aurora_version()`;
 * - readers read-only (`read_only`, which binds a login without SUPER);
 * - no GTID position for the gateway's login: the greeting names MySQL 8.0 and `@@gtid_mode` answers
 *   OFF, as on Aurora MySQL by default; the login may not read replication status (no SLAVE MONITOR).
 *
 * MariaDB delays replication by whole seconds only, so there is no millisecond lag to set; `pause()`
 * stops the readers' apply until the caller resumes it (a real lag spike).
 *
 * An instance reboots (maintenance) with `stop()` and `start()`: MariaDB starts again on its port in its
 * role, a reader resuming replication where it stopped and every reader following a restarted writer
 * within a second (mariadb-topology.ts); the lag manager opens its sessions to it again, so its row in
 * the status table is measured again once it is back.
 *
 * It fails over the Aurora way (aurora-failover.ts): the writer killed, a reader promoted (read_only
 * off; the other readers re-pointed at it by GTID), the old writer back as a read-only replica of it;
 * the lag manager follows the writer. With `durable`, the first reader acknowledges every commit
 * (semi-synchronous replication), as an Aurora writer's commits are durable on the shared volume before
 * they are acknowledged: promoting it loses no acknowledged write.
 *
 * With `replicateFrom`, the stand-in is a Blue/Green deployment's green environment
 * (aurora-mysql-bluegreen.ts): its writer is read-only and replicates from blue's, its surface and
 * logins come by replication, and its status table is kept only once `rename()` names it after the
 * switchover (until then blue's rows replicate into it). An instance's Aurora identity lives in its
 * forwarder (MariaDB has no @@aurora_server_id): `rename()` changes what each one answers, and the lag
 * manager reports the ids the forwarders answer now (restarted under the new names, for the writer
 * and readers of the moment, after a failover too).
 *
 * With `distinctHosts`, each forwarder listens on its own loopback address sharing one port, as
 * Aurora's instances are distinct hosts on one port, and `spareReaders` start with the cluster but
 * stay out of it (no endpoint, not listed) until `addReader()` brings one in: an instance added to the
 * running cluster as the gateway sees it (its creation itself is not modelled: MariaDB replicas start
 * from an empty datadir and replicate everything, which takes the time the cluster's start takes).
 */
import mysql from "mysql2/promise";
import type { AuroraFailoverCluster } from "./aurora-failover.js";
import { AURORA_STANDIN_DATABASE, type AuroraWire, startAuroraWire } from "./aurora-mysql-wire.js";
import type { AddReaderOptions } from "./aurora-standin.js";
import { type MariaDbInstance, startMariaDbTopology } from "./mariadb-topology.js";
import { portFreeOn, unusedPort } from "./ports.js";
import type { ServerGroup } from "./server-group.js";
import { waitFor } from "./wait-for.js";

/** The gateway's login on the stand-in: the application's database, Aurora's status table, nothing else. */
export const AURORA_MYSQL_LOGIN = { user: "aurora_app", password: "aurora-app-password" };
const LOGIN = AURORA_MYSQL_LOGIN;

/** How often the manager stamps the writer's time and measures every reader: the resolution of the reported lag. */
const SAMPLE_INTERVAL_MS = 10;

export interface AuroraMysqlStandinOptions {
  /** Readers besides the writer; default 2. */
  readerCount?: number;
  /** What aurora_version() answers. */
  version?: string;
  /** The first reader acknowledges every commit (semi-synchronous): the reader a failover promotes loses nothing. */
  durable?: boolean;
  /** A green environment replicating from this (blue's) writer; see the header. */
  replicateFrom?: AuroraMysqlInstance;
  /** Each instance's Aurora identifier from its topology name (primary, replica1, ...); default the name. */
  serverIdOf?: (name: string) => string;
  /**
   * Every instance's forwarder on its own loopback address (127.0.0.41, .42, ...) and one shared port;
   * its server id is the address's last number, so that `discovery.instanceHostPattern` "127.0.0.?"
   * leads from a listed id to the instance (as on the PostgreSQL stand-in). Default: 127.0.0.1, a port each.
   */
  distinctHosts?: boolean;
  /** Readers started besides `readerCount` but kept out of the cluster until `addReader()` (see the header). */
  spareReaders?: number;
}

/** One stand-in instance: `port` is MariaDB's own (what @@port answers), `url()` the gateway's way in through the forwarder. */
export interface AuroraMysqlInstance extends MariaDbInstance {
  /** What @@aurora_server_id answers through url() now. */
  readonly serverId: string;
  /** A crash: every session cut. */
  kill9(): Promise<void>;
}

export interface AuroraMysqlStandin extends ServerGroup<AuroraMysqlInstance>, AuroraFailoverCluster<AuroraMysqlInstance> {
  /**
   * Stops every reader's apply (the lag grows for real); resolves once each has stopped, with the
   * function that resumes them.
   */
  pause(): Promise<() => Promise<void>>;
  /**
   * Renames every instance (`serverIdOf` of its topology name) and keeps the writer's status table
   * under the new names from now on, starting to keep it on a green environment (see the header).
   */
  rename(serverIdOf: (name: string) => string): Promise<void>;
  /**
   * A spare reader joins the cluster: its endpoint opens and the writer's replica_host_status lists it,
   * in the order `listing` says (listed "while-starting": its endpoint refuses connections until then).
   */
  addReader(options?: AddReaderOptions): Promise<AuroraMysqlInstance>;
}

function asAurora(instance: MariaDbInstance, wire: AuroraWire, host = "127.0.0.1"): AuroraMysqlInstance {
  return {
    name: instance.name,
    port: instance.port,
    get serverId() {
      return wire.serverId;
    },
    url: (database = "test") => `mysql://${LOGIN.user}:${LOGIN.password}@${host}:${wire.port}/${database}`,
    query: (sql, params) => instance.query(sql, params),
    stop: (mode) => instance.stop(mode),
    start: (settings) => instance.start(settings),
    freeze: () => instance.freeze(),
    promote: () => instance.promote(),
    follow: (primary) => instance.follow(primary),
    rejoin: (primary) => instance.rejoin(primary),
    kill9: () => instance.stop("immediate"),
    pauseReplay: () => instance.pauseReplay(),
    resumeReplay: () => instance.resumeReplay(),
  };
}

const SURFACE_SQL = [
  `CREATE DATABASE ${AURORA_STANDIN_DATABASE}`,
  // The columns the AWS page lists, with its types
  // (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/AuroraMySQL.Reference.ISTables.html): the lag
  // and the update time measured, CPU and IS_CURRENT placeholders (0, and 1 for a row written this round).
  `CREATE TABLE ${AURORA_STANDIN_DATABASE}.replica_host_status (SERVER_ID varchar(100) PRIMARY KEY, SESSION_ID varchar(100) NOT NULL,
     LAST_UPDATE_TIMESTAMP datetime(6) NOT NULL, REPLICA_LAG_IN_MILLISECONDS double NOT NULL, CPU double NOT NULL DEFAULT 0,
     IS_CURRENT tinyint NOT NULL DEFAULT 1)`,
  `CREATE TABLE ${AURORA_STANDIN_DATABASE}.heartbeat (id int PRIMARY KEY, stamped_at datetime(6) NOT NULL)`,
  `INSERT INTO ${AURORA_STANDIN_DATABASE}.heartbeat VALUES (1, UTC_TIMESTAMP(6))`,
  `CREATE USER '${LOGIN.user}'@'%' IDENTIFIED BY '${LOGIN.password}'`,
  `GRANT ALL PRIVILEGES ON test.* TO '${LOGIN.user}'@'%'`,
  // The gateway's idempotency record lives in a database of its own, which this login may create.
  `GRANT ALL PRIVILEGES ON poolgate_internal.* TO '${LOGIN.user}'@'%'`,
  `GRANT SELECT ON ${AURORA_STANDIN_DATABASE}.replica_host_status TO '${LOGIN.user}'@'%'`,
];

/** Starts the MariaDB topology, installs Aurora MySQL's surface, starts the forwarders and the lag manager. */
export async function startAuroraMysqlStandin(options: AuroraMysqlStandinOptions = {}): Promise<AuroraMysqlStandin> {
  const green = options.replicateFrom !== undefined;
  const readerCount = options.readerCount ?? 2;
  const topology = await startMariaDbTopology(readerCount + (options.spareReaders ?? 0), {
    ...(options.durable === true ? { semiSyncReplica: "replica1" } : {}),
    // Green's server ids are apart from blue's (blue has at most a few instances).
    ...(green ? { replicateFrom: options.replicateFrom, serverIdBase: 100 } : {}),
  });
  const serverIdOf = options.serverIdOf ?? ((name: string) => name);
  const wires: AuroraWire[] = [];
  let manager: LagManager | undefined;
  const stop = async () => {
    await manager?.stop();
    await Promise.all(wires.map((wire) => wire.close()));
    await topology.destroy();
  };
  try {
    const [writer, ...readers] = topology.all();
    if (writer === undefined) throw new Error("the topology has no primary");
    if (!green) for (const sql of SURFACE_SQL) await writer.query(sql);
    const instances: AuroraMysqlInstance[] = [];
    const hostOf = (rank: number) => (options.distinctHosts === true ? `127.0.0.${41 + rank}` : "127.0.0.1");
    const sharedPort = options.distinctHosts === true ? await portFreeOn(topology.all().map((_, rank) => hostOf(rank))) : undefined;
    // The endpoint of the instance of this rank (opened now, or by addReader for a spare).
    const endpointOf = async (instance: MariaDbInstance, rank: number, targetPort = instance.port) => {
      const serverId = options.distinctHosts === true ? String(41 + rank) : serverIdOf(instance.name);
      const wire = await startAuroraWire(targetPort, { serverId, version: options.version ?? "3.08.0" }, { host: hostOf(rank), ...(sharedPort ? { port: sharedPort } : {}) });
      wires.push(wire);
      return { wire, instance: asAurora(instance, wire, hostOf(rank)) };
    };
    const spares = topology.all().slice(readerCount + 1).map((instance, i) => ({ instance, rank: readerCount + 1 + i }));
    for (const [rank, instance] of topology.all().slice(0, readerCount + 1).entries()) instances.push((await endpointOf(instance, rank)).instance);
    await waitFor(async () => (await Promise.all((green ? topology.all() : readers).map(hasSurface))).every(Boolean), 20000, "the stand-in's surface on every reader");
    if (options.durable === true) await semiSynchronous(instances[0] as AuroraMysqlInstance);
    // The writer and readers of the moment (a failover changes them), whether or not a lag manager runs
    // (a green environment's starts at rename); the manager reads each one's server id from its forwarder.
    let current = { writer: instances[0] as AuroraMysqlInstance, readers: instances.slice(1) };
    const startManager = async () => {
      const started = new LagManager(current.writer, current.readers);
      manager = started;
      await waitFor(() => started.rounds > 2, 20000, "the lag manager's first figures");
    };
    const follow = (writer: AuroraMysqlInstance, readers: AuroraMysqlInstance[]) => {
      current = { writer, readers };
      manager?.follow(writer, readers);
    };
    if (!green) await startManager();
    const readersNow = () => instances.filter((instance) => instance !== current.writer);
    const standin: AuroraMysqlStandin = {
      primary: instances[0] as AuroraMysqlInstance,
      replicas: instances.slice(1),
      all: () => instances,
      writer: () => current.writer,
      crash: (instance) => instance.kill9(),
      promote: (instance) => instance.promote(),
      // The old writer is not listed until it is back (rejoin).
      followWriter: async (instance) => follow(instance, current.readers.filter((reader) => reader !== instance)),
      follow: (reader, primary) => reader.follow(primary),
      rejoin: async (oldWriter, primary) => {
        await oldWriter.rejoin(primary);
        follow(primary, readersNow());
      },
      // Semi-synchronous on `reader` alone: no other reader's acknowledgement may stand for its own.
      durableOn: async (reader) => {
        for (const other of readersNow()) {
          await other.query(`SET GLOBAL rpl_semi_sync_slave_enabled = ${other === reader ? 1 : 0}`);
          await other.query("STOP SLAVE IO_THREAD");
          await other.query("START SLAVE IO_THREAD");
        }
        await current.writer.query("SET GLOBAL rpl_semi_sync_master_enabled = 1");
        await semiSynchronous(current.writer);
      },
      pause: async () => {
        const paused = readersNow();
        await Promise.all(paused.map((reader) => reader.pauseReplay()));
        return async () => {
          await Promise.all(paused.map((reader) => reader.resumeReplay()));
        };
      },
      rename: async (rename) => {
        await manager?.stop();
        manager = undefined;
        for (const [rank, instance] of topology.all().entries()) wires[rank]?.repoint(instance.port, rename(instance.name));
        // The old names' rows go: the writer (of the moment) lists the instances it has now, under their new ids.
        await current.writer.query(`DELETE FROM ${AURORA_STANDIN_DATABASE}.replica_host_status`);
        await startManager();
      },
      addReader: async (readerOptions = {}) => {
        const spare = spares.shift();
        if (spare === undefined) throw new Error("no spare reader left: start the stand-in with spareReaders");
        const starting = readerOptions.listing === "while-starting";
        // Listed while starting: its endpoint leads nowhere (connections fail) until it is available.
        const { wire, instance } = await endpointOf(spare.instance, spare.rank, starting ? await unusedPort() : spare.instance.port);
        if (starting) follow(current.writer, [...current.readers, instance]);
        await readerOptions.beforeStart?.();
        wire.repoint(spare.instance.port);
        if (!starting) follow(current.writer, [...current.readers, instance]);
        instances.push(instance);
        standin.replicas.push(instance);
        return instance;
      },
      destroy: stop,
    };
    return standin;
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Waits until the writer waits for its semi-synchronous reader's acknowledgements. */
async function semiSynchronous(writer: MariaDbInstance): Promise<void> {
  const status = async (name: string) => (await writer.query<{ Value: string }>(`SHOW STATUS LIKE '${name}'`))[0]?.Value;
  await waitFor(async () => Number(await status("Rpl_semi_sync_master_clients")) >= 1 && (await status("Rpl_semi_sync_master_status")) === "ON", 20000, "the first reader semi-synchronous");
}

async function hasSurface(instance: MariaDbInstance): Promise<boolean> {
  const rows = await instance.query<{ n: number }>(`SELECT count(*) AS n FROM ${AURORA_STANDIN_DATABASE}.heartbeat`).catch(() => []);
  return Number(rows[0]?.n) === 1;
}

/**
 * Stamps the writer's time, measures each reader against it and writes the writer's replica_host_status
 * (see the header). Its sessions are opened as needed and dropped when they fail, so that it follows a
 * failover (`follow`): a reader it cannot reach keeps its last row, which only ages (the gateway then
 * takes it for further behind, never for further ahead).
 */
class LagManager {
  private readonly timer: NodeJS.Timeout;
  private round: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly sessions = new Map<AuroraMysqlInstance, Promise<mysql.Connection>>();
  /** Counts changes of the list (`follow`); a round that sees a new count drops the rows of instances no longer listed (the old writer). */
  private listVersion = 0;
  private listVersionWritten = 0;
  rounds = 0;

  constructor(
    public writer: AuroraMysqlInstance,
    public readers: AuroraMysqlInstance[],
  ) {
    this.timer = setInterval(() => {
      this.round = this.round.then(() => this.sample()).catch(() => undefined);
    }, SAMPLE_INTERVAL_MS);
  }

  /** From the next round on, `writer` is stamped and lists `readers`. */
  follow(writer: AuroraMysqlInstance, readers: AuroraMysqlInstance[]): void {
    this.writer = writer;
    this.readers = readers;
    this.listVersion++;
  }

  private session(instance: AuroraMysqlInstance): Promise<mysql.Connection> {
    let session = this.sessions.get(instance);
    if (session === undefined) {
      session = (async () => {
        const connection = await mysql.createConnection({ host: "127.0.0.1", port: instance.port, user: "root", dateStrings: true, connectTimeout: 2000 });
        connection.on("error", () => undefined);
        await connection.query("SET time_zone = '+00:00'");
        return connection;
      })();
      this.sessions.set(instance, session);
    }
    return session;
  }

  /** Runs `sql` on the instance's session; a session that failed is dropped (the next round opens another). */
  private async query(instance: AuroraMysqlInstance, sql: string): Promise<unknown> {
    const session = this.session(instance);
    try {
      const [rows] = await (await session).query(sql);
      return rows;
    } catch (err) {
      if (this.sessions.get(instance) === session) this.sessions.delete(instance);
      void session.then((connection) => connection.destroy(), () => undefined);
      throw err;
    }
  }

  private async sample(): Promise<void> {
    if (this.stopped) return;
    const db = AURORA_STANDIN_DATABASE;
    const { writer, readers, listVersion } = this;
    await this.query(writer, `UPDATE ${db}.heartbeat SET stamped_at = SYSDATE(6) WHERE id = 1`);
    const rows: string[] = [`('${writer.serverId}', 'MASTER_SESSION_ID', SYSDATE(6), 0)`];
    const measured = await Promise.all(
      readers.map((reader) =>
        this.query(reader, `SELECT SYSDATE(6) AS at, TIMESTAMPDIFF(MICROSECOND, stamped_at, SYSDATE(6)) / 1000 AS lag FROM ${db}.heartbeat WHERE id = 1`).then(
          (result) => ({ reader, row: (result as { at: string; lag: string }[])[0] }),
          () => ({ reader, row: undefined }),
        ),
      ),
    );
    for (const { reader, row } of measured) {
      if (row !== undefined) rows.push(`('${reader.serverId}', '${reader.serverId}-session', '${row.at}', ${Math.max(0, Number(row.lag))})`);
    }
    if (listVersion !== this.listVersionWritten) {
      const listed = [writer, ...readers].map((instance) => `'${instance.serverId}'`).join(", ");
      await this.query(writer, `DELETE FROM ${db}.replica_host_status WHERE SERVER_ID NOT IN (${listed})`);
      this.listVersionWritten = listVersion;
    }
    await this.query(writer, `REPLACE INTO ${db}.replica_host_status (SERVER_ID, SESSION_ID, LAST_UPDATE_TIMESTAMP, REPLICA_LAG_IN_MILLISECONDS) VALUES ${rows.join(", ")}`);
    this.rounds++;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.round;
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(sessions.map((session) => session.then((connection) => connection.end()).catch(() => undefined)));
  }
}
