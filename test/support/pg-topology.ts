/**
 * A real PostgreSQL topology on this machine for routing and failover tests: one primary and N
 * streaming replicas in temporary directories on free ports, started from the PostgreSQL binaries.
 * initdb refuses to run as root, so when the tests run as root every server command runs as the
 * `postgres` user. Everything is torn down by `destroy()`.
 */
import { execFile } from "node:child_process";
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { portFreeOn, unusedPort } from "./ports.js";
import { freezeProcesses, runningAsRoot, type ServerGroup, startServerGroup, tempDirFor } from "./server-group.js";
import { waitFor } from "./wait-for.js";

const run = promisify(execFile);

function binDir(): string {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) throw new Error("PostgreSQL server binaries not found under /usr/lib/postgresql");
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  return join(root, versions[0] as string, "bin");
}


/** Runs a PostgreSQL binary, as the postgres user when we are root. */
export async function pgCommand(binary: string, args: string[]): Promise<string> {
  const path = join(binDir(), binary);
  const { stdout } = runningAsRoot ? await run("runuser", ["-u", "postgres", "--", path, ...args]) : await run(path, args);
  return stdout;
}

export interface PgInstance {
  readonly name: string;
  /** Loopback address the server listens on (127.0.0.1, or 127.0.0.1x with distinct hosts). */
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  url(database?: string): string;
  query<T = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<T[]>;
  start(): Promise<void>;
  stop(mode?: "fast" | "immediate"): Promise<void>;
  /** SIGKILL to the postmaster and every backend (frozen or not): the crash a failover test should survive. */
  kill9(): Promise<void>;
  /** SIGSTOP to the postmaster and every backend: a server that accepts TCP connections and answers nothing. */
  freeze(): Promise<void>;
  promote(): Promise<void>;
  /** Points this replica at another primary (after a promotion) and restarts it. */
  follow(primary: PgInstance): Promise<void>;
  /** pg_wal_replay_pause / pg_wal_replay_resume: WAL still arrives, it is not applied. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /**
   * Replaces this (stopped or crashed) instance's data with a base backup of `primary` and starts it
   * as its standby; `settings` (postgresql.conf lines) are added before it starts.
   */
  rebuildFrom(primary: PgInstance, settings?: string): Promise<void>;
  isRunning(): Promise<boolean>;
}

class Instance implements PgInstance {
  /** Stopped with SIGSTOP: pg_ctl could not stop it, only SIGKILL can. */
  private frozen = false;

  constructor(
    readonly name: string,
    readonly host: string,
    readonly port: number,
    readonly dataDir: string,
  ) {}

  url(database = "postgres"): string {
    return `postgres://postgres@${this.host}:${this.port}/${database}`;
  }

  async query<T = pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
    const client = new pg.Client({ connectionString: this.url(), connectionTimeoutMillis: 5000 });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  }

  async start(): Promise<void> {
    await pgCommand("pg_ctl", ["-D", this.dataDir, "-l", join(this.dataDir, "server.log"), "-w", "-t", "60", "start"]);
  }

  async stop(mode: "fast" | "immediate" = "fast"): Promise<void> {
    if (this.frozen) return this.kill9();
    await pgCommand("pg_ctl", ["-D", this.dataDir, "-m", mode, "-w", "stop"]).catch(() => undefined);
  }

  async kill9(): Promise<void> {
    // Every process: a frozen backend would never notice that its postmaster died.
    for (const pid of await this.processIds()) killIfAlive(pid);
    this.frozen = false;
    // Orphaned backends notice the postmaster's death and exit; wait until nothing listens any more.
    await waitFor(async () => !(await this.query("select 1").then(() => true, () => false)), 20000, `${this.name} to stop answering after kill -9`, 25);
  }

  async freeze(): Promise<void> {
    // The postmaster first, so that it forks nothing new meanwhile.
    await freezeProcesses(await this.processIds());
    this.frozen = true;
  }

  /** The postmaster's pid, then its children's. */
  private async processIds(): Promise<number[]> {
    const postmaster = Number(readFileSync(join(this.dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    const { stdout } = await run("ps", ["-o", "pid=", "--ppid", String(postmaster)]).catch(() => ({ stdout: "" }));
    return [postmaster, ...stdout.split("\n").filter((line) => line.trim() !== "").map(Number)];
  }

  async promote(): Promise<void> {
    await pgCommand("pg_ctl", ["-D", this.dataDir, "-w", "promote"]);
  }

  async rebuildFrom(primary: PgInstance, settings = ""): Promise<void> {
    await this.stop("immediate");
    rmSync(this.dataDir, { recursive: true, force: true });
    await pgCommand("pg_basebackup", ["-h", primary.host, "-p", String(primary.port), "-U", "postgres", "-D", this.dataDir, "-X", "stream", "-R", "--no-sync", "--checkpoint=fast"]);
    // The backup carries the primary's settings: this instance keeps its own address and is nobody's primary yet.
    appendFileSync(join(this.dataDir, "postgresql.auto.conf"), `${standbySettings(this, primary)}synchronous_standby_names = ''\n${settings}`);
    await this.start();
  }

  async follow(primary: PgInstance): Promise<void> {
    await this.stop("fast");
    appendFileSync(join(this.dataDir, "postgresql.auto.conf"), primaryConnInfo(this, primary));
    writeFileSync(join(this.dataDir, "standby.signal"), "");
    await this.start();
  }

  async pauseReplay(): Promise<void> {
    await this.query("select pg_wal_replay_pause()");
  }

  async resumeReplay(): Promise<void> {
    await this.query("select pg_wal_replay_resume()");
  }

  async isRunning(): Promise<boolean> {
    return pgCommand("pg_ctl", ["-D", this.dataDir, "status"]).then(
      () => true,
      () => false,
    );
  }
}

export type PgTopology = ServerGroup<PgInstance>;

function primaryConnInfo(standby: { name: string }, primary: { host: string; port: number }): string {
  return `primary_conninfo = 'host=${primary.host} port=${primary.port} user=postgres application_name=${standby.name}'\n`;
}

/** A standby's own address and its primary, after a base backup copied the primary's settings. */
function standbySettings(standby: { name: string; host: string; port: number }, primary: { host: string; port: number }): string {
  return `port = ${standby.port}\nlisten_addresses = '${standby.host}'\n${primaryConnInfo(standby, primary)}`;
}

function serverSettings(host: string, port: number): string {
  return [
    `port = ${port}`,
    `listen_addresses = '${host}'`,
    // TCP only: instances sharing a port on different addresses would collide on a socket file.
    "unix_socket_directories = ''",
    "wal_level = replica",
    "max_wal_senders = 10",
    "hot_standby = on",
    "hot_standby_feedback = on",
    "wal_keep_size = '64MB'",
    // Test servers: durability against power loss is not what these tests are about.
    "fsync = off",
    "full_page_writes = off",
    "shared_buffers = '32MB'",
    "max_connections = 100",
    "logging_collector = off",
    "",
  ].join("\n");
}

export interface TopologyOptions {
  /**
   * Every instance on its own loopback address (127.0.0.11, .12, ...) and one shared port, as Aurora
   * instances are distinct hosts on one port; otherwise all on 127.0.0.1 with their own ports.
   */
  distinctHosts?: boolean;
  /** Commits on the primary wait until this replica has flushed them, so promoting it loses none. */
  synchronousStandby?: string;
}

/** Starts a primary and `replicaCount` streaming replicas. */
export async function startTopology(replicaCount = 2, options: TopologyOptions = {}): Promise<PgTopology> {
  const root = tempDirFor("postgres", "poolgate-topology-");
  return startServerGroup<Instance>(root, async (instances) => {
    const hostOf = (i: number) => (options.distinctHosts ? `127.0.0.${11 + i}` : "127.0.0.1");
    const sharedPort = options.distinctHosts ? await portFreeOn(Array.from({ length: replicaCount + 1 }, (_, i) => hostOf(i))) : undefined;
    const primaryPort = sharedPort ?? (await unusedPort());
    const primary = new Instance("primary", hostOf(0), primaryPort, join(root, "primary"));
    await pgCommand("initdb", ["-D", primary.dataDir, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
    appendFileSync(join(primary.dataDir, "postgresql.conf"), serverSettings(primary.host, primaryPort));
    appendFileSync(join(primary.dataDir, "pg_hba.conf"), "host all all 127.0.0.0/8 trust\nhost replication all 127.0.0.0/8 trust\n");
    await primary.start();
    instances.push(primary);

    for (let i = 1; i <= replicaCount; i++) {
      const port = sharedPort ?? (await unusedPort());
      const replica = new Instance(`replica${i}`, hostOf(i), port, join(root, `replica${i}`));
      await pgCommand("pg_basebackup", ["-h", primary.host, "-p", String(primaryPort), "-U", "postgres", "-D", replica.dataDir, "-X", "stream", "-R", "--no-sync"]);
      appendFileSync(join(replica.dataDir, "postgresql.auto.conf"), standbySettings(replica, primary));
      await replica.start();
      instances.push(replica);
    }
    if (options.synchronousStandby) {
      await primary.query(`ALTER SYSTEM SET synchronous_standby_names = '${options.synchronousStandby}'`);
      await primary.query("SELECT pg_reload_conf()");
    }
  });
}

/** Where a new standby listens and what it is configured with besides (postgresql.conf lines). */
export interface StandbyOptions {
  /** Its loopback address (default 127.0.0.1) and port (default: a free one). */
  host?: string;
  port?: number;
  /** Lines added before it first starts (the base backup carries the primary's own). */
  settings?: string;
}

/**
 * A new instance `name` in `dataDir` on a free port: a base backup of `primary`, started as a
 * streaming standby of `upstream` (the primary, or one of its standbys: cascading replication; a
 * backup taken on a standby is refused with full_page_writes off). The caller stops it.
 */
export async function startStandbyOf(primary: PgInstance, name: string, dataDir: string, upstream: PgInstance = primary, options: StandbyOptions = {}): Promise<PgInstance> {
  const standby = new Instance(name, options.host ?? "127.0.0.1", options.port ?? (await unusedPort()), dataDir);
  await pgCommand("pg_basebackup", ["-h", primary.host, "-p", String(primary.port), "-U", "postgres", "-D", dataDir, "-X", "stream", "-R", "--no-sync", "--checkpoint=fast"]);
  appendFileSync(join(dataDir, "postgresql.auto.conf"), `${standbySettings(standby, upstream)}synchronous_standby_names = ''\n${options.settings ?? ""}`);
  await standby.start();
  return standby;
}

/** SIGKILL, where a process already gone (a backend that exited between the listing and the kill) is fine: ESRCH. */
function killIfAlive(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
  }
}

/** Every standby applies its primary's changes `lagMs` late (recovery_min_apply_delay, a real apply delay; 0 for none). */
export async function setApplyDelay(standbys: readonly PgInstance[], lagMs: number): Promise<void> {
  for (const standby of standbys) {
    await standby.query(`ALTER SYSTEM SET recovery_min_apply_delay = '${Math.round(lagMs)}ms'`);
    await standby.query("SELECT pg_reload_conf()");
  }
}
