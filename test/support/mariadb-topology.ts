/**
 * A real MariaDB topology on this machine for the MySQL engine's routing and failover tests: one
 * primary and N replicas with GTID replication (binary log, gtid_strict_mode), each in its own
 * temporary datadir on a free port, started from the machine's mariadbd as the `mysql` user when we
 * are root. Everything is stopped and removed by `destroy()`.
 *
 * The gateway connects as `app`, a user without SUPER/READ_ONLY ADMIN, as applications do (and as on
 * Aurora): only then does `read_only` refuse its writes. Optionally one replica acknowledges commits
 * (semi-synchronous replication), so a write the primary acknowledged survives its crash there.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import mysql from "mysql2/promise";
import { unusedPort } from "./ports.js";
import { freezeProcesses, runningAsRoot, type ServerGroup, startServerGroup, tempDirFor } from "./server-group.js";
import { waitFor } from "./wait-for.js";

const asMysql = (command: string, args: string[]): [string, string[]] => (runningAsRoot ? ["runuser", ["-u", "mysql", "--", command, ...args]] : [command, args]);

export interface MariaDbInstance {
  readonly name: string;
  readonly port: number;
  /** As the application user `app` (no SUPER: read_only applies to it). */
  url(database?: string): string;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Graceful shutdown (SIGTERM) or a crash (SIGKILL, frozen or not). */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  /**
   * Starts the stopped server again in its role (a replica read-only, resuming replication where it
   * stopped; a primary writable), with `settings` (mariadbd options without their dashes, such as
   * `innodb-buffer-pool-size`) over the defaults from then on: a reboot, or a class change. What was
   * set with SET GLOBAL is gone, as after any restart.
   */
  start(settings?: Readonly<Record<string, string>>): Promise<void>;
  /** SIGSTOP: a server that accepts TCP connections and answers nothing. */
  freeze(): Promise<void>;
  /** Turns a replica into a primary: replication off, writes allowed. */
  promote(): Promise<void>;
  /** Replicates from another primary by GTID. */
  follow(primary: MariaDbInstance): Promise<void>;
  /**
   * Restarts this crashed former primary as `primary`'s semi-synchronous replica, from the position
   * `primary` had replicated when it was promoted. Transactions this one had binlogged but nobody
   * acknowledged may stay in its tables (its own binlog is reset), so tests write unique keys.
   */
  rejoin(primary: MariaDbInstance): Promise<void>;
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
}

class Instance implements MariaDbInstance {
  private process: ChildProcess | undefined;
  /** Set when the server exited without being stopped: how, and the end of its error log (the directory goes with destroy()). */
  private exitedUnexpectedly: string | undefined;
  private stopping = false;
  /** The role the next start() starts it in: read-only (a replica) and semi-synchronous or not; the last start's settings. */
  private readOnly = true;
  private semiSyncReplica = false;
  private settings: Readonly<Record<string, string>> = {};

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly serverId: number,
    private readonly dir: string,
  ) {}

  url(database = "test"): string {
    return `mysql://${APP_USER}:${APP_PASSWORD}@127.0.0.1:${this.port}/${database}`;
  }

  async query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    const connection = await mysql.createConnection({ host: "127.0.0.1", port: this.port, user: "root", connectTimeout: 5000 }).catch((err: unknown) => {
      throw this.exitedUnexpectedly ? new Error(`${this.name} (port ${this.port}) is not running: ${this.exitedUnexpectedly}`, { cause: err }) : err;
    });
    try {
      const [rows] = await connection.query(sql, params);
      return rows as T[];
    } finally {
      await connection.end();
    }
  }

  async start(settings: Readonly<Record<string, string>> = this.settings): Promise<void> {
    this.settings = settings;
    await this.launch(this.readOnly, this.semiSyncReplica);
  }

  async launch(readOnly: boolean, semiSyncReplica: boolean): Promise<void> {
    this.readOnly = readOnly;
    this.semiSyncReplica = semiSyncReplica;
    const args = [
      "--no-defaults",
      `--datadir=${join(this.dir, "data")}`,
      `--tmpdir=${tmpDirOf(this.dir)}`,
      `--port=${this.port}`,
      "--bind-address=127.0.0.1",
      `--socket=${join(this.dir, "mysqld.sock")}`,
      `--pid-file=${join(this.dir, "mysqld.pid")}`,
      `--log-error=${join(this.dir, "error.log")}`,
      `--server-id=${this.serverId}`,
      `--log-bin=${join(this.dir, "binlog")}`,
      "--binlog-format=ROW",
      "--gtid-strict-mode=1",
      "--log-slave-updates=1",
      `--read-only=${readOnly ? 1 : 0}`,
      "--skip-name-resolve",
      "--innodb-buffer-pool-size=32M",
      "--innodb-flush-log-at-trx-commit=2",
      // The first primary waits for the chosen replica's acknowledgement once it is connected (see
      // startMariaDbTopology); a promoted one replicates asynchronously.
      "--rpl-semi-sync-master-timeout=30000",
      "--rpl-semi-sync-master-wait-point=AFTER_SYNC",
      "--rpl-semi-sync-slave-enabled=" + (semiSyncReplica ? 1 : 0),
      // Later options win: a class change's memory settings, say.
      ...Object.entries(this.settings).map(([name, value]) => `--${name}=${value}`),
    ];
    const [command, commandArgs] = asMysql("/usr/sbin/mariadbd", args);
    const child = spawn(command, commandArgs, { stdio: "ignore" });
    this.process = child;
    this.exitedUnexpectedly = undefined;
    this.stopping = false;
    child.once("exit", (code, signal) => {
      if (this.stopping || this.process !== child) return;
      this.exitedUnexpectedly = `it exited by itself (${signal ?? `code ${code}`}); the end of its error log:\n${this.errorLogTail()}`;
      process.stderr.write(`mariadb test instance ${this.name}: ${this.exitedUnexpectedly}\n`);
    });
    const deadline = Date.now() + 30000;
    while (Date.now() < deadline) {
      if (await this.query("SELECT 1").then(() => true, () => false)) return;
      if (this.process.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`${this.name} did not start; the end of its error log:\n${this.errorLogTail()}`);
  }

  private errorLogTail(): string {
    try {
      return readFileSync(join(this.dir, "error.log"), "utf8").split("\n").slice(-30).join("\n");
    } catch (err) {
      return `(no error log: ${String(err)})`;
    }
  }

  async stop(mode: "fast" | "immediate" = "fast"): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    this.stopping = true;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    // runuser forwards SIGTERM; a crash must hit mariadbd itself, whose pid is in its pid file.
    if (mode === "immediate") {
      process.kill(this.serverPid(), "SIGKILL");
      // runuser stops itself while its child is stopped (a frozen server): wake it, so that it reaps the child and exits.
      child.kill("SIGCONT");
    } else child.kill("SIGTERM");
    await exited;
  }

  async freeze(): Promise<void> {
    await freezeProcesses([this.serverPid()]);
  }

  private serverPid(): number {
    return Number(execFileSync("cat", [join(this.dir, "mysqld.pid")], { encoding: "utf8" }).trim());
  }

  async rejoin(primary: MariaDbInstance): Promise<void> {
    await this.stop("immediate");
    await this.launch(true, true);
    // What the new primary had replicated from us when it was promoted: from there on, its binlog.
    const [row] = await primary.query<{ pos: string }>("SELECT @@gtid_slave_pos AS pos");
    await this.query("STOP SLAVE");
    await this.query("RESET MASTER");
    await this.query("SET GLOBAL gtid_slave_pos = ?", [row?.pos ?? ""]);
    await this.follow(primary);
  }

  async promote(): Promise<void> {
    await this.applyRelayLog();
    await this.query("STOP SLAVE");
    await this.query("RESET SLAVE ALL");
    await this.query("SET GLOBAL rpl_semi_sync_slave_enabled = 0");
    await this.query("SET GLOBAL read_only = 0");
    this.readOnly = false;
    this.semiSyncReplica = false;
  }

  /**
   * Stops receiving and applies everything already received before a promotion. A semi-synchronous
   * replica acknowledges a commit once it is in its relay log, not once applied; STOP SLAVE stops the
   * SQL thread where it is and RESET SLAVE ALL deletes the relay log, so promoting a replica behind in
   * replay (a loaded machine) without this threw acknowledged writes away. A transaction received
   * only in part was never acknowledged: the SQL thread waits for its end, and STOP SLAVE rolls it back.
   */
  private async applyRelayLog(): Promise<void> {
    // The SQL thread first (a paused replica's): with GTIDs, starting a slave thread while both are
    // stopped discards the relay log and fetches again from gtid_slave_pos, from a primary now gone.
    await this.query("START SLAVE SQL_THREAD");
    await this.query("STOP SLAVE IO_THREAD");
    // Applied up to what was read (the file and offset in the primary's binlog), or stuck waiting for
    // the rest of a partial transaction: "has read all relay log" with the same positions for 25 polls.
    let stuck = { at: "", polls: 0 };
    await waitFor(
      async () => {
        const [status] = await this.query<SlaveStatus>("SHOW SLAVE STATUS");
        if (status === undefined) return true;
        const read = `${status.Master_Log_File}:${status.Read_Master_Log_Pos}`;
        const at = `${status.Relay_Master_Log_File}:${status.Exec_Master_Log_Pos}`;
        if (at === read) return true;
        const waiting = status.Slave_SQL_Running_State.includes("has read all relay log");
        stuck = waiting && stuck.at === at ? { at, polls: stuck.polls + 1 } : { at, polls: 0 };
        return stuck.polls >= 25;
      },
      60000,
      `${this.name} to apply its relay log before its promotion`,
      20,
    );
  }

  async follow(primary: MariaDbInstance): Promise<void> {
    await this.query("STOP SLAVE");
    // Reconnects a second after losing its primary (MariaDB's default waits 60 s): a primary restarted
    // (a reboot without failover) is followed again at once, as Aurora's readers, which share its
    // volume, are.
    await this.query(`CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${primary.port}, MASTER_USER='root', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1`);
    await this.query("START SLAVE");
  }

  async pauseReplay(): Promise<void> {
    await this.query("STOP SLAVE SQL_THREAD");
  }

  async resumeReplay(): Promise<void> {
    await this.query("START SLAVE SQL_THREAD");
  }
}

/** The fields of SHOW SLAVE STATUS the promotion reads. */
interface SlaveStatus {
  Master_Log_File: string;
  Read_Master_Log_Pos: number;
  Relay_Master_Log_File: string;
  Exec_Master_Log_Pos: number;
  Slave_SQL_Running_State: string;
}

export type MariaDbTopology = ServerGroup<MariaDbInstance>;

const APP_USER = "app";
const APP_PASSWORD = "app-password";

export interface MariaDbTopologyOptions {
  /** This replica (by name, e.g. "replica1") acknowledges every commit before the primary answers. */
  semiSyncReplica?: string;
  /**
   * The primary starts read-only and replicates from this instance (another topology's primary), its
   * replicas cascading from it: a Blue/Green deployment's green environment. Databases and users come
   * by replication, from the start of `replicateFrom`'s binary log.
   */
  replicateFrom?: MariaDbInstance;
  /**
   * Added to each server id (the primary's is 1, the replicas' 2, 3, ...): a server skips the events
   * that carry its own id, so topologies that replicate from each other need ids apart. Default 0.
   */
  serverIdBase?: number;
}

/**
 * The server's own directory for temporary files. With `--no-defaults` it is /tmp, shared by every
 * server a test run starts, and bootstraps running at the same time then collide on their temporary
 * tables' names ("Could not remove temporary table: '/tmp/#sql-temptable-…'", then "Unknown table
 * 'mysql.tmp_user_sys'": 3 of 18 failed, six at a time; 0 of 18 with a directory each).
 */
const tmpDirOf = (dir: string): string => join(dir, "tmp");

async function initialize(dir: string): Promise<void> {
  execFileSync(runningAsRoot ? "runuser" : "mkdir", runningAsRoot ? ["-u", "mysql", "--", "mkdir", tmpDirOf(dir)] : [tmpDirOf(dir)]);
  const [command, args] = asMysql("mariadb-install-db", [
    "--no-defaults",
    `--datadir=${join(dir, "data")}`,
    `--tmpdir=${tmpDirOf(dir)}`,
    "--auth-root-authentication-method=normal",
    "--skip-test-db",
  ]);
  execFileSync(command, args, { stdio: "ignore" });
}

/** Starts a primary (with database `test` and the user `app`, unless it replicates them) and `replicaCount` GTID replicas. */
export async function startMariaDbTopology(replicaCount = 1, options: MariaDbTopologyOptions = {}): Promise<MariaDbTopology> {
  const root = tempDirFor("mysql", "poolgate-mariadb-");
  return startServerGroup<Instance>(root, async (instances) => {
    for (let i = 0; i <= replicaCount; i++) {
      const dir = join(root, i === 0 ? "primary" : `replica${i}`);
      execFileSync(runningAsRoot ? "runuser" : "mkdir", runningAsRoot ? ["-u", "mysql", "--", "mkdir", dir] : [dir]);
      await initialize(dir);
      const name = i === 0 ? "primary" : `replica${i}`;
      const instance = new Instance(name, await unusedPort(), (options.serverIdBase ?? 0) + i + 1, dir);
      await instance.launch(i !== 0 || options.replicateFrom !== undefined, name === options.semiSyncReplica);
      instances.push(instance);
    }
    const [primary, ...replicas] = instances as [Instance, ...Instance[]];
    if (options.replicateFrom !== undefined) {
      await primary.follow(options.replicateFrom);
      for (const replica of replicas) await replica.follow(primary);
      return;
    }
    await primary.query("CREATE DATABASE IF NOT EXISTS test");
    // Made here, as the grant script makes it, so that a gateway's start adds only the table.
    await primary.query("CREATE DATABASE IF NOT EXISTS poolgate_internal");
    await primary.query(`CREATE USER '${APP_USER}'@'%' IDENTIFIED BY '${APP_PASSWORD}'`);
    await primary.query(`GRANT ALL PRIVILEGES ON test.* TO '${APP_USER}'@'%'`);
    // The gateway's idempotency record lives in a database of its own, which this login may create.
    await primary.query(`GRANT ALL PRIVILEGES ON poolgate_internal.* TO '${APP_USER}'@'%'`);
    // Enough to read replication status (SHOW SLAVE STATUS), nothing that bypasses read_only.
    await primary.query(`GRANT SLAVE MONITOR, BINLOG MONITOR ON *.* TO '${APP_USER}'@'%'`);
    for (const replica of replicas) await replica.follow(primary);
    if (options.semiSyncReplica !== undefined) {
      await primary.query("SET GLOBAL rpl_semi_sync_master_enabled = 1");
      const clients = async () => Number((await primary.query<{ Value: string }>("SHOW STATUS LIKE 'Rpl_semi_sync_master_clients'"))[0]?.Value);
      await waitFor(async () => (await clients()) >= 1, 10000, "the semi-synchronous replica to connect", 50);
    }
  });
}
