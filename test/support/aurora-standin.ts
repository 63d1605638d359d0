/**
 * An Aurora PostgreSQL stand-in: the machine's PostgreSQL primary and streaming replicas
 * (pg-topology.ts) showing Aurora's documented surface to the gateway's login (aurora-standin-sql.ts,
 * docs/aurora.md): the community replica functions refused with Aurora's SQLSTATE and words,
 * `aurora_replica_status()` with per-reader lag measured for real, settable replica lag (0-500 ms,
 * real apply delay), and readers that are read-only (hot standbys). Its manager samples the writer's
 * WAL position every few milliseconds; `destroy()` stops it and the servers.
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { type AuroraFailoverCluster, makeDurableOn } from "./aurora-failover.js";
import { AURORA_LOGIN, standinSql, STANDIN_SCHEMA, type WalFunctionsOnWriter } from "./aurora-standin-sql.js";
import { type PgInstance, setApplyDelay, startTopology } from "./pg-topology.js";
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
}

/** A PgInstance as the stand-in shows it (the blue/green harness makes its green instances with it). */
export function asAurora(instance: PgInstance): AuroraInstance {
  return {
    name: instance.name,
    host: instance.host,
    port: instance.port,
    dataDir: instance.dataDir,
    serverId: instance.name,
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
  const topology = await startTopology(options.readerCount ?? 2);
  try {
    const instances = topology.all().map(asAurora);
    const [writer] = instances as [AuroraInstance];
    for (const instance of instances) await setServerId(instance);
    for (const sql of standinSql(options.walFunctionsOnWriter ?? "refused", options.version ?? "16.4.2")) await writer.query(sql);
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
      destroy: async () => {
        await manager.stop();
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

/** The instance's own id, in its own postgresql.conf (ALTER SYSTEM refuses a parameter no module defines; a base backup would copy it). */
export async function setServerId(instance: AuroraInstance): Promise<void> {
  appendFileSync(join(instance.dataDir, "postgresql.conf"), serverIdSetting(instance));
  await instance.query("SELECT pg_reload_conf()");
}

/** The configuration line naming an instance, for an instance rebuilt from another's base backup (which carries the other's). */
export function serverIdSetting(instance: AuroraInstance): string {
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
