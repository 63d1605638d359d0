/**
 * A real PostgreSQL topology on this machine for routing and failover tests: one primary and N
 * streaming replicas in temporary directories on free ports, started from the PostgreSQL binaries.
 * initdb refuses to run as root, so when the tests run as root every server command runs as the
 * `postgres` user. Everything is torn down by `destroy()`.
 */
import { execFile, execFileSync } from "node:child_process";
import { appendFileSync, chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { unusedPort } from "./flaky-tcp-proxy.js";

const run = promisify(execFile);

function binDir(): string {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) throw new Error("PostgreSQL server binaries not found under /usr/lib/postgresql");
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  return join(root, versions[0] as string, "bin");
}

const asRoot = process.getuid?.() === 0;

/** Runs a PostgreSQL binary, as the postgres user when we are root. */
async function pgCommand(binary: string, args: string[]): Promise<string> {
  const path = join(binDir(), binary);
  const { stdout } = asRoot ? await run("runuser", ["-u", "postgres", "--", path, ...args]) : await run(path, args);
  return stdout;
}

export interface PgInstance {
  readonly name: string;
  readonly port: number;
  readonly dataDir: string;
  url(database?: string): string;
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<T[]>;
  start(): Promise<void>;
  stop(mode?: "fast" | "immediate"): Promise<void>;
  promote(): Promise<void>;
  /** Points this replica at another primary (after a promotion) and restarts it. */
  follow(primary: PgInstance): Promise<void>;
  isRunning(): Promise<boolean>;
}

class Instance implements PgInstance {
  constructor(
    readonly name: string,
    readonly port: number,
    readonly dataDir: string,
  ) {}

  url(database = "postgres"): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  async query<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
    const client = new pg.Client({ connectionString: this.url(), connectionTimeoutMillis: 5000 });
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end();
    }
  }

  async start(): Promise<void> {
    await pgCommand("pg_ctl", ["-D", this.dataDir, "-l", join(this.dataDir, "server.log"), "-w", "-t", "60", "start"]);
  }

  async stop(mode: "fast" | "immediate" = "fast"): Promise<void> {
    await pgCommand("pg_ctl", ["-D", this.dataDir, "-m", mode, "-w", "stop"]).catch(() => undefined);
  }

  async promote(): Promise<void> {
    await pgCommand("pg_ctl", ["-D", this.dataDir, "-w", "promote"]);
  }

  async follow(primary: PgInstance): Promise<void> {
    await this.stop("fast");
    appendFileSync(join(this.dataDir, "postgresql.auto.conf"), `primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=postgres application_name=${this.name}'\n`);
    writeFileSync(join(this.dataDir, "standby.signal"), "");
    await this.start();
  }

  async isRunning(): Promise<boolean> {
    return pgCommand("pg_ctl", ["-D", this.dataDir, "status"]).then(
      () => true,
      () => false,
    );
  }
}

export interface PgTopology {
  primary: PgInstance;
  replicas: PgInstance[];
  all(): PgInstance[];
  destroy(): Promise<void>;
}

function serverSettings(port: number, socketDir: string): string {
  return [
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${socketDir}'`,
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
  /** Commits on the primary wait until this replica has flushed them, so promoting it loses none. */
  synchronousStandby?: string;
}

/** Starts a primary and `replicaCount` streaming replicas. */
export async function startTopology(replicaCount = 2, options: TopologyOptions = {}): Promise<PgTopology> {
  const root = mkdtempSync(join(tmpdir(), "poolgate-topology-"));
  chmodSync(root, 0o755);
  if (asRoot) chownSync(root, idOf("-u", "postgres"), idOf("-g", "postgres"));
  const instances: Instance[] = [];
  try {
    const primaryPort = await unusedPort();
    const primary = new Instance("primary", primaryPort, join(root, "primary"));
    await pgCommand("initdb", ["-D", primary.dataDir, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
    appendFileSync(join(primary.dataDir, "postgresql.conf"), serverSettings(primaryPort, root));
    appendFileSync(join(primary.dataDir, "pg_hba.conf"), "host replication all 127.0.0.1/32 trust\n");
    await primary.start();
    instances.push(primary);

    for (let i = 1; i <= replicaCount; i++) {
      const port = await unusedPort();
      const replica = new Instance(`replica${i}`, port, join(root, `replica${i}`));
      await pgCommand("pg_basebackup", ["-h", "127.0.0.1", "-p", String(primaryPort), "-U", "postgres", "-D", replica.dataDir, "-X", "stream", "-R", "--no-sync"]);
      appendFileSync(
        join(replica.dataDir, "postgresql.auto.conf"),
        `port = ${port}\nprimary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres application_name=${replica.name}'\n`,
      );
      await replica.start();
      instances.push(replica);
    }
    if (options.synchronousStandby) {
      await primary.query(`ALTER SYSTEM SET synchronous_standby_names = '${options.synchronousStandby}'`);
      await primary.query("SELECT pg_reload_conf()");
    }
  } catch (err) {
    for (const instance of instances) await instance.stop("immediate");
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  const [primary, ...replicas] = instances as [Instance, ...Instance[]];
  return {
    primary,
    replicas,
    all: () => instances,
    destroy: async () => {
      for (const instance of instances) await instance.stop("immediate");
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Numeric uid/gid of a user (harness set-up only). */
function idOf(flag: "-u" | "-g", user: string): number {
  return Number(execFileSync("id", [flag, user], { encoding: "utf8" }).trim());
}
