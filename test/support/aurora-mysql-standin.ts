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
 * stops a reader's apply for a while (a real lag spike).
 *
 * With `replicateFrom`, the stand-in is a Blue/Green deployment's green environment
 * (aurora-mysql-bluegreen.ts): its writer is read-only and replicates from blue's, its surface and
 * logins come by replication, and its status table is kept only once `rename()` names it after the
 * switchover (until then blue's rows replicate into it). An instance's Aurora identity lives in its
 * forwarder (MariaDB has no @@aurora_server_id): `rename()` changes what each one answers.
 */
import mysql from "mysql2/promise";
import { AURORA_STANDIN_DATABASE, type AuroraWire, startAuroraWire } from "./aurora-mysql-wire.js";
import { type MariaDbInstance, startMariaDbTopology } from "./mariadb-topology.js";
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
  /** A green environment replicating from this (blue's) writer; see the header. */
  replicateFrom?: AuroraMysqlInstance;
  /** Each instance's Aurora identifier from its topology name (primary, replica1, ...); default the name. */
  serverIdOf?: (name: string) => string;
}

/** One stand-in instance: `port` is MariaDB's own (what @@port answers), `url()` the gateway's way in through the forwarder. */
export interface AuroraMysqlInstance extends MariaDbInstance {
  /** What @@aurora_server_id answers through url() now. */
  readonly serverId: string;
}

export interface AuroraMysqlStandin extends ServerGroup<AuroraMysqlInstance> {
  /** Stops every reader's apply for `durationMs` (the lag grows for real), then resumes it. */
  pause(durationMs: number): Promise<void>;
  /**
   * Renames every instance (`serverIdOf` of its topology name) and keeps the writer's status table
   * under the new names from now on, starting to keep it on a green environment (see the header).
   */
  rename(serverIdOf: (name: string) => string): Promise<void>;
}

function asAurora(instance: MariaDbInstance, wire: AuroraWire): AuroraMysqlInstance {
  return {
    name: instance.name,
    port: instance.port,
    get serverId() {
      return wire.serverId;
    },
    url: (database = "test") => `mysql://${LOGIN.user}:${LOGIN.password}@127.0.0.1:${wire.port}/${database}`,
    query: (sql, params) => instance.query(sql, params),
    stop: (mode) => instance.stop(mode),
    freeze: () => instance.freeze(),
    promote: () => instance.promote(),
    follow: (primary) => instance.follow(primary),
    rejoin: (primary) => instance.rejoin(primary),
    pauseReplay: () => instance.pauseReplay(),
    resumeReplay: () => instance.resumeReplay(),
  };
}

const SURFACE_SQL = [
  `CREATE DATABASE ${AURORA_STANDIN_DATABASE}`,
  // The columns the gateway reads, typed as the AWS page lists them (SERVER_ID, SESSION_ID varchar(100)).
  `CREATE TABLE ${AURORA_STANDIN_DATABASE}.replica_host_status (SERVER_ID varchar(100) PRIMARY KEY, SESSION_ID varchar(100) NOT NULL,
     LAST_UPDATE_TIMESTAMP datetime(6) NOT NULL, REPLICA_LAG_IN_MILLISECONDS double NOT NULL)`,
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
  // Green's server ids are apart from blue's (blue has at most a few instances).
  const topology = await startMariaDbTopology(options.readerCount ?? 2, green ? { replicateFrom: options.replicateFrom, serverIdBase: 100 } : {});
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
    for (const instance of topology.all()) {
      const wire = await startAuroraWire(instance.port, { serverId: serverIdOf(instance.name), version: options.version ?? "3.08.0" });
      wires.push(wire);
      instances.push(asAurora(instance, wire));
    }
    await waitFor(async () => (await Promise.all((green ? topology.all() : readers).map(hasSurface))).every(Boolean), 20000, "the stand-in's surface on every reader");
    const sample = async () => {
      const [writerId, ...readerIds] = wires.map((wire) => wire.serverId) as [string, ...string[]];
      manager = await LagManager.start(writer, writerId, readers.map((reader, rank) => ({ instance: reader, serverId: readerIds[rank] as string })));
      const started = manager;
      await waitFor(() => started.rounds > 2, 20000, "the lag manager's first figures");
    };
    if (!green) await sample();
    return {
      primary: instances[0] as AuroraMysqlInstance,
      replicas: instances.slice(1),
      all: () => instances,
      pause: async (durationMs) => {
        await Promise.all(readers.map((reader) => reader.pauseReplay()));
        await new Promise((resolve) => setTimeout(resolve, durationMs));
        await Promise.all(readers.map((reader) => reader.resumeReplay()));
      },
      rename: async (rename) => {
        await manager?.stop();
        for (const [rank, instance] of topology.all().entries()) (wires[rank] as AuroraWire).repoint(instance.port, rename(instance.name));
        // The old names' rows go: the writer lists the instances it has now.
        await writer.query(`DELETE FROM ${AURORA_STANDIN_DATABASE}.replica_host_status`);
        await sample();
      },
      destroy: stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function hasSurface(instance: MariaDbInstance): Promise<boolean> {
  const rows = await instance.query<{ n: number }>(`SELECT count(*) AS n FROM ${AURORA_STANDIN_DATABASE}.heartbeat`).catch(() => []);
  return Number(rows[0]?.n) === 1;
}

/** Stamps the writer's time, measures each reader against it and writes the writer's replica_host_status (see the header). */
class LagManager {
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> = Promise.resolve();
  private stopped = false;
  rounds = 0;

  private constructor(
    private readonly writer: mysql.Connection,
    private readonly readers: { serverId: string; session: mysql.Connection }[],
    private readonly writerId: string,
  ) {}

  static async start(writer: MariaDbInstance, writerId: string, readers: { instance: MariaDbInstance; serverId: string }[]): Promise<LagManager> {
    const open = async (instance: MariaDbInstance) => {
      const session = await mysql.createConnection({ host: "127.0.0.1", port: instance.port, user: "root", dateStrings: true });
      session.on("error", () => undefined);
      await session.query("SET time_zone = '+00:00'");
      return session;
    };
    const manager = new LagManager(await open(writer), await Promise.all(readers.map(async (reader) => ({ serverId: reader.serverId, session: await open(reader.instance) }))), writerId);
    manager.timer = setInterval(() => {
      manager.round = manager.round.then(() => manager.sample()).catch(() => undefined);
    }, SAMPLE_INTERVAL_MS);
    return manager;
  }

  private async sample(): Promise<void> {
    if (this.stopped) return;
    const db = AURORA_STANDIN_DATABASE;
    await this.writer.query(`UPDATE ${db}.heartbeat SET stamped_at = SYSDATE(6) WHERE id = 1`);
    const rows: string[] = [`('${this.writerId}', 'MASTER_SESSION_ID', SYSDATE(6), 0)`];
    for (const reader of this.readers) {
      const [measured] = await reader.session.query(
        `SELECT SYSDATE(6) AS at, TIMESTAMPDIFF(MICROSECOND, stamped_at, SYSDATE(6)) / 1000 AS lag FROM ${db}.heartbeat WHERE id = 1`,
      );
      const row = (measured as { at: string; lag: string }[])[0];
      if (row === undefined) continue;
      rows.push(`('${reader.serverId}', '${reader.serverId}-session', '${row.at}', ${Math.max(0, Number(row.lag))})`);
    }
    await this.writer.query(`REPLACE INTO ${db}.replica_host_status (SERVER_ID, SESSION_ID, LAST_UPDATE_TIMESTAMP, REPLICA_LAG_IN_MILLISECONDS) VALUES ${rows.join(", ")}`);
    this.rounds++;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.round;
    await Promise.all([this.writer, ...this.readers.map((reader) => reader.session)].map((session) => session.end().catch(() => undefined)));
  }
}
