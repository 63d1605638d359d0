/**
 * An Aurora PostgreSQL stand-in: the machine's PostgreSQL primary and streaming replicas
 * (pg-topology.ts) showing Aurora's documented surface to the gateway's login (aurora-standin-sql.ts,
 * docs/aurora.md): the community replica functions refused with Aurora's SQLSTATE and words,
 * `aurora_replica_status()` with per-reader lag measured for real, settable replica lag (0-500 ms,
 * real apply delay), and readers that are read-only (hot standbys). Its manager samples the writer's
 * WAL position every few milliseconds; `destroy()` stops it and the servers. With `distinctHosts`,
 * instances are distinct loopback hosts on one port, as Aurora's are, and readers can be added to the
 * running cluster (`addReader`), listed by aurora_replica_status() once available.
 */
import { appendFileSync } from "node:fs";
import { dirname, join } from "node:path";
import pg from "pg";
import { type AuroraFailoverCluster, makeDurableOn } from "./aurora-failover.js";
import { AURORA_LOGIN, type InstanceListing, standinSql, STANDIN_SCHEMA, type WalFunctionsOnWriter } from "./aurora-standin-sql.js";
import { type PgInstance, setApplyDelay, startStandbyOf, startTopology } from "./pg-topology.js";
import type { ServerGroup } from "./server-group.js";
import { waitFor } from "./wait-for.js";

export interface AuroraStandinOptions {
  /** Readers besides the writer; default 2. */
  readerCount?: number;
  /** Aurora refuses pg_current_wal_lsn() unless logical replication is on: both are possible (default "refused"). */
  walFunctionsOnWriter?: WalFunctionsOnWriter;
  /** Apply lag every reader starts with, ms (default 0). */
  lagMs?: number;
  /** What aurora_version() answers. */
  version?: string;
  /**
   * Every instance on its own loopback address (127.0.0.11, .12, ...) and one shared port, as Aurora's
   * instances are distinct hosts on one port. Its server id is the address's last number, so that the
   * gateway's `discovery.instanceHostPattern` "127.0.0.?" leads from a listed id to the instance as
   * "?.<cluster id>.<region>.rds.amazonaws.com" does on Aurora. Default: all on 127.0.0.1, each on its
   * own port, named by their names.
   */
  distinctHosts?: boolean;
}

/**
 * When aurora_replica_status() starts listing a reader added to the running cluster. AWS documents
 * that the reader endpoint balances connections over the Aurora Replicas that are available
 * (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/Aurora.Endpoints.Reader.html) but not
 * when a new instance first appears in the replica status, so both are kept:
 * - "when-available": once it accepts connections and streams from the writer;
 * - "while-starting": before it accepts connections (listed with no lag yet), until it is available.
 */
export type AddedReaderListing = "when-available" | "while-starting";

export interface AddReaderOptions {
  listing?: AddedReaderListing;
  /** Runs once the instance is in the cluster's list (or hidden from it) and before it is created: a test's hook. */
  beforeStart?: () => Promise<void>;
}

/** How often the manager records the writer's time and WAL position: the resolution of the reported lag. */
const SAMPLE_INTERVAL_MS = 10;

/** One stand-in instance: a PgInstance whose url() is the gateway's (Aurora-like, non-superuser) login. */
export interface AuroraInstance extends PgInstance {
  /** What aurora_db_instance_identifier() answers on it. */
  readonly serverId: string;
  /** As the administrator (the harness's own sessions). */
  adminUrl(database?: string): string;
}

export interface AuroraStandin extends ServerGroup<AuroraInstance>, AuroraFailoverCluster<AuroraInstance> {
  /** Every reader applies the writer's changes `lagMs` late (recovery_min_apply_delay: a real apply delay). */
  setLag(lagMs: number): Promise<void>;
  /** `lagMs` of lag for `durationMs`, then back to the lag before. */
  spike(lagMs: number, durationMs: number): Promise<void>;
  /** The instance that takes the manager's samples (the writer); changes with failover. */
  writer(): AuroraInstance;
  /** After a promotion: the manager samples `instance`, the new writer (aurora-failover.ts). */
  setWriter(instance: AuroraInstance): Promise<void>;
  /**
   * A reader added to the running cluster (create-db-instance into it): a base backup of the writer
   * started as its standby, on the next loopback address (distinct hosts) or a free port; it joins
   * `replicas` and `all()`, and is available (accepts connections, streams) when this resolves.
   */
  addReader(options?: AddReaderOptions): Promise<AuroraInstance>;
}

/** A PgInstance as the stand-in shows it (the blue/green harness makes its green instances with it). */
export function asAurora(instance: PgInstance, serverId = instance.name): AuroraInstance {
  return {
    name: instance.name,
    host: instance.host,
    port: instance.port,
    dataDir: instance.dataDir,
    serverId,
    adminUrl: (database = "postgres") => instance.url(database),
    url: (database = "postgres") => instance.url(database).replace("postgres://postgres@", `postgres://${AURORA_LOGIN}@`),
    query: (sql, params) => instance.query(sql, params),
    start: () => instance.start(),
    stop: (mode) => instance.stop(mode),
    kill9: () => instance.kill9(),
    freeze: () => instance.freeze(),
    promote: () => instance.promote(),
    follow: (primary) => instance.follow(primary),
    pauseReplay: () => instance.pauseReplay(),
    resumeReplay: () => instance.resumeReplay(),
    rebuildFrom: (primary, settings) => instance.rebuildFrom(primary, settings),
    isRunning: () => instance.isRunning(),
  };
}

/** Starts the topology, installs Aurora's surface and starts the lag manager. */
export async function startAuroraStandin(options: AuroraStandinOptions = {}): Promise<AuroraStandin> {
  const distinctHosts = options.distinctHosts ?? false;
  const topology = await startTopology(options.readerCount ?? 2, { distinctHosts });
  const added: AuroraInstance[] = [];
  try {
    const instances = topology.all().map((instance) => asAurora(instance, distinctHosts ? lastNumber(instance.host) : instance.name));
    const [writer] = instances as [AuroraInstance];
    for (const instance of instances) await setServerId(instance);
    for (const sql of standinSql(options.walFunctionsOnWriter ?? "refused", options.version ?? "16.4.2")) await writer.query(sql);
    for (const instance of instances) await writer.query(`INSERT INTO ${STANDIN_SCHEMA}.instances VALUES ($1, $2, 'streaming')`, [instance.name, instance.serverId]);
    for (const instance of instances) await instance.query("ALTER SYSTEM SET wal_receiver_status_interval = '1s'");
    const manager = new LagManager(writer);
    await manager.start();
    const standin: AuroraStandin = {
      primary: writer,
      replicas: instances.slice(1),
      all: () => instances,
      writer: () => manager.writer,
      setWriter: (instance) => manager.moveTo(instance),
      crash: (instance) => instance.kill9(),
      promote: (instance) => instance.promote(),
      followWriter: (instance) => manager.moveTo(instance),
      follow: (reader, writer) => reader.follow(writer),
      rejoin: (oldWriter, writer) => oldWriter.rebuildFrom(writer, serverIdSetting(oldWriter)),
      durableOn: (reader) => makeDurableOn(standin, reader),
      setLag: (lagMs) => setApplyDelay(instances.filter((instance) => instance !== manager.writer), lagMs),
      spike: async (lagMs, durationMs) => {
        await standin.setLag(lagMs);
        await new Promise((resolve) => setTimeout(resolve, durationMs));
        await standin.setLag(0);
      },
      addReader: async (readerOptions = {}) => {
        const reader = await startAddedReader(manager.writer, instances, distinctHosts, readerOptions, added);
        instances.push(reader);
        standin.replicas.push(reader);
        return reader;
      },
      destroy: async () => {
        await manager.stop();
        for (const reader of added) await reader.stop("immediate");
        await topology.destroy();
      },
    };
    // The readers have replicated the surface before anyone uses it.
    await waitFor(async () => (await Promise.all(instances.map(hasSurface))).every(Boolean), 20000, "the stand-in's surface on every instance");
    if (options.lagMs !== undefined && options.lagMs > 0) await standin.setLag(options.lagMs);
    return standin;
  } catch (err) {
    await topology.destroy();
    throw err;
  }
}

/** The last number of a loopback address: the server id of an instance on distinct hosts. */
function lastNumber(host: string): string {
  return host.split(".")[3] ?? host;
}

/**
 * Starts a new reader of `writer` beside `instances` (pushed onto `started` as soon as it runs, for
 * destroy), listed by aurora_replica_status() as `options.listing` says until it is available, then as every reader.
 */
async function startAddedReader(
  writer: AuroraInstance,
  instances: readonly AuroraInstance[],
  distinctHosts: boolean,
  options: AddReaderOptions,
  started: AuroraInstance[],
): Promise<AuroraInstance> {
  const name = `replica${instances.length}`;
  const host = distinctHosts ? `127.0.0.${Math.max(...instances.map((instance) => Number(lastNumber(instance.host)))) + 1}` : "127.0.0.1";
  const serverId = distinctHosts ? lastNumber(host) : name;
  const until: InstanceListing = options.listing === "while-starting" ? "starting" : "hidden";
  await writer.query(`INSERT INTO ${STANDIN_SCHEMA}.instances VALUES ($1, $2, $3)`, [name, serverId, until]);
  await options.beforeStart?.();
  const root = dirname((instances[0] as AuroraInstance).dataDir);
  // Its own id from its first start: the base backup carries the writer's.
  const standby = await startStandbyOf(writer, name, join(root, name), writer, {
    host,
    ...(distinctHosts ? { port: writer.port } : {}),
    settings: serverIdSetting({ serverId }),
  });
  const reader = asAurora(standby, serverId);
  started.push(reader);
  // Available: it accepts connections (pg_ctl waited for that) and streams from the writer.
  await waitFor(
    async () => (await writer.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'", [name]))[0]?.n === 1,
    30000,
    `${name} to stream from the writer`,
  );
  await writer.query(`UPDATE ${STANDIN_SCHEMA}.instances SET listing = 'streaming' WHERE application_name = $1`, [name]);
  return reader;
}

/** The instance's own id, in its own postgresql.conf (ALTER SYSTEM refuses a parameter no module defines; a base backup would copy it). */
export async function setServerId(instance: AuroraInstance): Promise<void> {
  appendFileSync(join(instance.dataDir, "postgresql.conf"), serverIdSetting(instance));
  await instance.query("SELECT pg_reload_conf()");
}

/** The configuration line naming an instance, for an instance rebuilt from another's base backup (which carries the other's). */
export function serverIdSetting(instance: Pick<AuroraInstance, "serverId">): string {
  return `${STANDIN_SCHEMA}.server_id = '${instance.serverId}'\n`;
}

async function hasSurface(instance: AuroraInstance): Promise<boolean> {
  const rows = await instance.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = '${STANDIN_SCHEMA}'`).catch(() => []);
  return rows[0]?.n === 1;
}

/**
 * Records the writer's time and WAL insert position every SAMPLE_INTERVAL_MS (and forgets samples
 * older than a minute): what the writer's aurora_replica_status() measures each reader's lag by.
 */
export class LagManager {
  private client: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private sampling: Promise<void> = Promise.resolve();
  private samples = 0;

  constructor(public writer: AuroraInstance) {}

  async start(): Promise<void> {
    this.client = await this.connect();
    this.timer = setInterval(() => {
      this.sampling = this.sampling.then(() => this.sample());
    }, SAMPLE_INTERVAL_MS);
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.writer.adminUrl(), connectionTimeoutMillis: 2000 });
    client.on("error", () => undefined);
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    return client;
  }

  /**
   * A sample on the manager's session; a session that failed (the writer rebooted) is dropped and the
   * next round opens another, so that the samples, and with them the readers' lag, resume once the
   * writer is back.
   */
  private async sample(): Promise<void> {
    const client = this.client ?? (await this.connect().catch(() => undefined));
    if (!client) return;
    this.client = client;
    const prune = ++this.samples % 100 === 0 ? `; DELETE FROM ${STANDIN_SCHEMA}.applied_samples WHERE at < now() - interval '1 minute'` : "";
    await client.query(`INSERT INTO ${STANDIN_SCHEMA}.applied_samples SELECT clock_timestamp(), pg_catalog.pg_current_wal_insert_lsn()${prune}`).catch(() => {
      if (this.client === client) this.client = undefined;
      void client.end().catch(() => undefined);
    });
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sampling;
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }

  /** Samples another writer from now on (after a promotion). */
  async moveTo(writer: AuroraInstance): Promise<void> {
    await this.stop();
    this.writer = writer;
    await this.start();
  }
}
