/**
 * A primary and a synchronous standby of one engine, failed over again and again: kill (or freeze)
 * whichever is the primary, promote the standby, then bring the dead one back as the new primary's
 * synchronous standby, ready for the next round. The failover suite and the bench's failover part
 * run the same scenario over either engine through this interface (PostgreSQL: synchronous streaming
 * replication, a base backup to rejoin; MariaDB: semi-synchronous GTID replication, AFTER_SYNC).
 *
 * The gateway sees two fixed endpoints: `writerUrl` is the first primary's, `readerUrl` the first
 * standby's; which of them is the primary changes with every round.
 */
import mysql from "mysql2/promise";
import pg from "pg";
import { type MariaDbInstance, startMariaDbTopology } from "./mariadb-topology.js";
import { type PgInstance, startTopology } from "./pg-topology.js";
import { waitFor } from "./wait-for.js";

/** The SQL the failover suite and the scenario run, in the engine's dialect. */
export interface FailoverDialect {
  engine: "postgres" | "mysql";
  /** A table of writes keyed by the writer's own unique id (no sequence that a crash could reuse), and a counter row. */
  createTables: string[];
  /** Inserts one row; its one parameter is the id. */
  insert: string;
  /** A read: one row, one column `n`. */
  read: string;
  /** Every id written, as a column `id`. */
  ids: string;
  /** A read of table `blocker` (which createTables makes) carrying `marker` in its text: it waits while lockBlocker's lock is held. */
  blockedRead(marker: string): string;
  /** A write to table `blocker` carrying `marker` in its text: it waits while lockBlocker's lock is held. */
  blockedWrite(marker: string): string;
  /** A statement that ends the session it runs on. */
  endsOwnSession: string;
  /** A SERIALIZABLE increment of the counter row, as batch statements. */
  increment: string[];
  /** The counter's value, as a column `n`. */
  counter: string;
  /** A statement that sleeps `seconds`, carrying `marker` in its text. */
  sleep(seconds: number, marker: string): string;
}

export interface FailoverPair {
  readonly dialect: FailoverDialect;
  readonly writerUrl: string;
  readonly readerUrl: string;
  /** Which configured endpoint (gateway names `<cluster>/writer`, `<cluster>/reader1`) is the primary now. */
  primaryEndpoint(cluster: string): string;
  standbyEndpoint(cluster: string): string;
  /** Runs SQL on the current primary, as an administrator. */
  queryPrimary<T>(sql: string): Promise<T[]>;
  /** How many of the primary's sessions (the administrator's own aside) run a statement containing `marker` and wait for a lock. */
  sessionsWaiting(marker: string): Promise<number>;
  /**
   * Takes a lock on table `blocker` on the primary that keeps every read and write of it waiting, on
   * a session held until the primary dies or the returned function releases it.
   */
  lockBlocker(): Promise<() => Promise<void>>;
  /** Ends (as an administrator would) the primary's sessions whose running statement contains `marker`; how many. */
  killSessionsRunning(marker: string): Promise<number>;
  /** Stops every process of the primary (SIGSTOP): it keeps its port and answers nothing. */
  freezePrimary(): Promise<void>;
  /**
   * Crashes the primary (SIGKILL, frozen or not); resolves once it is gone. First it proves the
   * premise of "no acknowledged write lost" (the standby is synchronous and has received what the
   * primary had written a moment before), and throws "premise not met" without killing otherwise.
   */
  killPrimary(): Promise<void>;
  /** Crashes the standby: after promoteStandby, the former primary (still frozen, say). */
  killStandby(): Promise<void>;
  /** Makes the standby a primary that takes writes; the pair's roles swap. */
  promoteStandby(): Promise<void>;
  /** Brings the crashed former primary back as the new primary's synchronous standby, caught up. */
  rejoinAsStandby(): Promise<void>;
  /** A promotion was not followed by rejoinAsStandby (a test that failed half-way): the pair has no standby. */
  readonly standbyMissing: boolean;
  destroy(): Promise<void>;
}

export const PG_FAILOVER_DIALECT: FailoverDialect = {
  engine: "postgres",
  createTables: [
    "create table ledger (id text primary key, at timestamptz not null default now())",
    "create table counter (id int primary key, n int not null)",
    "insert into counter values (1, 0)",
    "create table blocker (n int)",
  ],
  insert: "insert into ledger (id) values ($1)",
  blockedRead: (marker) => `select count(*)::int as n from blocker /* ${marker} */`,
  blockedWrite: (marker) => `insert into blocker values (1) /* ${marker} */`,
  read: "select count(*)::int as n from ledger",
  ids: "select id from ledger",
  increment: ["select n from counter where id = 1", "update counter set n = n + 1 where id = 1"],
  counter: "select n from counter where id = 1",
  endsOwnSession: "select pg_terminate_backend(pg_backend_pid())",
  sleep: (seconds, marker) => `select pg_sleep(${seconds}) /* ${marker} */`,
};

export const MYSQL_FAILOVER_DIALECT: FailoverDialect = {
  engine: "mysql",
  createTables: [
    "create table test.ledger (id varchar(64) primary key, at timestamp(3) not null default current_timestamp(3)) engine=InnoDB",
    "create table test.counter (id int primary key, n int not null) engine=InnoDB",
    "insert into test.counter values (1, 0)",
    "create table test.blocker (n int) engine=InnoDB",
  ],
  insert: "insert into ledger (id) values (?)",
  blockedRead: (marker) => `select count(*) as n from blocker /* ${marker} */`,
  blockedWrite: (marker) => `insert into blocker values (1) /* ${marker} */`,
  read: "select count(*) as n from ledger",
  ids: "select id from test.ledger",
  increment: ["select n from counter where id = 1", "update counter set n = n + 1 where id = 1"],
  counter: "select n from test.counter where id = 1",
  endsOwnSession: "KILL CONNECTION_ID()",
  sleep: (seconds, marker) => `select sleep(${seconds}) /* ${marker} */`,
};

const STANDBY_DEADLINE_MS = 30000;

/** Waits for a standby's state; a server still starting (refusing queries) counts as not yet. */
function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  return waitFor(() => condition().catch(() => false), STANDBY_DEADLINE_MS, `failover pair: ${what}`, 50);
}

/** The failover run cannot judge lost writes: the database was not in the state it relies on. */
function premiseNotMet(why: string): never {
  throw new Error(`failover pair: premise not met before the kill: ${why}`);
}

/** Role swapping shared by both engines: instance 0 is the writer endpoint, instance 1 the reader. */
abstract class Pair<I> implements FailoverPair {
  abstract readonly dialect: FailoverDialect;
  protected primaryIndex = 0;

  constructor(protected readonly instances: [I, I]) {}

  abstract readonly writerUrl: string;
  abstract readonly readerUrl: string;
  abstract queryPrimary<T>(sql: string): Promise<T[]>;
  abstract killSessionsRunning(marker: string): Promise<number>;
  abstract sessionsWaiting(marker: string): Promise<number>;
  abstract lockBlocker(): Promise<() => Promise<void>>;
  abstract freezePrimary(): Promise<void>;
  abstract killPrimary(): Promise<void>;
  abstract killStandby(): Promise<void>;
  abstract promoteStandby(): Promise<void>;
  abstract rejoinAsStandby(): Promise<void>;
  abstract destroy(): Promise<void>;

  protected get primary(): I {
    return this.instances[this.primaryIndex] as I;
  }

  protected get standby(): I {
    return this.instances[1 - this.primaryIndex] as I;
  }

  protected swap(): void {
    this.primaryIndex = 1 - this.primaryIndex;
    this.standbyMissing = true;
  }

  standbyMissing = false;

  primaryEndpoint(cluster: string): string {
    return `${cluster}/${this.primaryIndex === 0 ? "writer" : "reader1"}`;
  }

  standbyEndpoint(cluster: string): string {
    return `${cluster}/${this.primaryIndex === 0 ? "reader1" : "writer"}`;
  }
}

class PgPair extends Pair<PgInstance> {
  readonly dialect = PG_FAILOVER_DIALECT;
  readonly writerUrl: string;
  readonly readerUrl: string;

  constructor(
    instances: [PgInstance, PgInstance],
    private readonly destroyAll: () => Promise<void>,
  ) {
    super(instances);
    this.writerUrl = instances[0].url();
    this.readerUrl = instances[1].url();
  }

  queryPrimary<T>(sql: string): Promise<T[]> {
    return this.primary.query<T>(sql);
  }

  async killSessionsRunning(marker: string): Promise<number> {
    const killed = await this.primary.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where pid <> pg_backend_pid() and query like $1 and query not like '%pg_terminate_backend%'",
      [`%${marker}%`],
    );
    return killed.length;
  }

  async sessionsWaiting(marker: string): Promise<number> {
    const waiting = await this.primary.query("select 1 from pg_stat_activity where pid <> pg_backend_pid() and query like $1 and wait_event_type = 'Lock'", [`%${marker}%`]);
    return waiting.length;
  }

  async lockBlocker(): Promise<() => Promise<void>> {
    const holder = new pg.Client({ connectionString: this.primary.url() });
    // The holder may die with the primary: that is its end, not an error.
    holder.on("error", () => undefined);
    await holder.connect();
    await holder.query("begin");
    await holder.query("lock table blocker in access exclusive mode");
    return () => holder.end().catch(() => undefined);
  }

  freezePrimary(): Promise<void> {
    return this.primary.freeze();
  }

  async killPrimary(): Promise<void> {
    await this.provePremise();
    await this.primary.kill9();
  }

  /** The standby streams synchronously (a commit waits for it, with no fallback) and has received what the primary had written. */
  private async provePremise(): Promise<void> {
    const [written] = await this.primary.query<{ lsn: string }>("select pg_current_wal_lsn()::text as lsn");
    const replication = () =>
      this.primary.query<{ sync_state: string; behind: boolean }>("select sync_state, flush_lsn < $2::pg_lsn as behind from pg_stat_replication where application_name = $1", [this.standby.name, written?.lsn]);
    const [state] = await replication();
    if (state?.sync_state !== "sync") premiseNotMet(`${this.standby.name} is not a synchronous standby (${JSON.stringify(state ?? "not connected")})`);
    await until(async () => (await replication())[0]?.behind === false, `${this.standby.name} to flush the primary's WAL up to ${written?.lsn} (premise)`);
  }

  killStandby(): Promise<void> {
    return this.standby.kill9();
  }

  async promoteStandby(): Promise<void> {
    await this.standby.promote();
    this.swap();
  }

  async rejoinAsStandby(): Promise<void> {
    const [primary, standby] = [this.primary, this.standby];
    await standby.rebuildFrom(primary);
    await until(async () => (await primary.query("select 1 from pg_stat_replication where application_name = $1 and state = 'streaming'", [standby.name])).length === 1, `${standby.name} streaming`);
    await primary.query(`ALTER SYSTEM SET synchronous_standby_names = '${standby.name}'`);
    await primary.query("SELECT pg_reload_conf()");
    await until(async () => (await primary.query("select 1 from pg_stat_replication where application_name = $1 and sync_state = 'sync'", [standby.name])).length === 1, `${standby.name} synchronous`);
    this.standbyMissing = false;
  }

  destroy(): Promise<void> {
    return this.destroyAll();
  }
}

class MariaDbPair extends Pair<MariaDbInstance> {
  readonly dialect = MYSQL_FAILOVER_DIALECT;
  readonly writerUrl: string;
  readonly readerUrl: string;
  /** The primary's Rpl_semi_sync_master_no_tx once its standby was semi-synchronous: any more means a fallback to asynchronous. */
  private unacknowledgedAtJoin = 0;

  constructor(
    instances: [MariaDbInstance, MariaDbInstance],
    private readonly destroyAll: () => Promise<void>,
  ) {
    super(instances);
    this.writerUrl = instances[0].url();
    this.readerUrl = instances[1].url();
  }

  queryPrimary<T>(sql: string): Promise<T[]> {
    return this.primary.query<T>(sql);
  }

  async killSessionsRunning(marker: string): Promise<number> {
    const sessions = await this.primary.query<{ id: number }>("select id from information_schema.processlist where info like ? and id <> connection_id()", [`%${marker}%`]);
    for (const session of sessions) await this.primary.query(`KILL ${Number(session.id)}`);
    return sessions.length;
  }

  async sessionsWaiting(marker: string): Promise<number> {
    const waiting = await this.primary.query("select id from information_schema.processlist where info like ? and id <> connection_id() and state like 'Waiting for table%'", [`%${marker}%`]);
    return waiting.length;
  }

  async lockBlocker(): Promise<() => Promise<void>> {
    const holder = await mysql.createConnection({ uri: this.primary.url() });
    // The holder may die with the primary: that is its end, not an error.
    holder.on("error", () => undefined);
    await holder.query("LOCK TABLES blocker WRITE");
    return () => holder.end().catch(() => undefined);
  }

  freezePrimary(): Promise<void> {
    return this.primary.freeze();
  }

  async killPrimary(): Promise<void> {
    await this.provePremise();
    await this.primary.stop("immediate");
  }

  /**
   * Semi-synchronous replication is on and has never fallen back to asynchronous since the standby
   * joined (Rpl_semi_sync_master_no_tx: commits answered without an acknowledgement), and the standby
   * has received everything the primary had binlogged a moment ago. With AFTER_SYNC, every commit
   * answered after that was in the standby's relay log first.
   */
  private async provePremise(): Promise<void> {
    const status = new Map((await this.primary.query<{ Variable_name: string; Value: string }>("SHOW STATUS LIKE 'Rpl_semi_sync_master_%'")).map((row) => [row.Variable_name, row.Value]));
    if (status.get("Rpl_semi_sync_master_status") !== "ON") premiseNotMet(`semi-synchronous replication is ${status.get("Rpl_semi_sync_master_status") ?? "absent"} on the primary`);
    if (Number(status.get("Rpl_semi_sync_master_clients")) < 1) premiseNotMet("no semi-synchronous standby is connected");
    const unacknowledged = Number(status.get("Rpl_semi_sync_master_no_tx"));
    if (unacknowledged !== this.unacknowledgedAtJoin) premiseNotMet(`${unacknowledged - this.unacknowledgedAtJoin} commits were answered without the standby's acknowledgement (semi-sync fell back to asynchronous)`);
    const [written] = await this.primary.query<{ pos: string }>("SELECT @@gtid_binlog_pos AS pos");
    const pos = written?.pos ?? "";
    await until(() => this.received(pos), `${this.standby.name} to receive the primary's binlog up to ${pos} (premise)`);
  }

  /** The standby's IO thread has received `pos` (single replication domain, as this harness runs). */
  private async received(pos: string): Promise<boolean> {
    const [status] = await this.standby.query<{ Gtid_IO_Pos: string }>("SHOW SLAVE STATUS");
    const seq = (gtid: string) => Number(gtid.split("-").at(-1));
    return status !== undefined && seq(status.Gtid_IO_Pos) >= seq(pos);
  }

  killStandby(): Promise<void> {
    return this.standby.stop("immediate");
  }

  async promoteStandby(): Promise<void> {
    await this.standby.promote();
    this.swap();
  }

  async rejoinAsStandby(): Promise<void> {
    const [primary, standby] = [this.primary, this.standby];
    await standby.rejoin(primary);
    await primary.query("SET GLOBAL rpl_semi_sync_master_enabled = 1");
    await this.semiSynchronous();
    this.standbyMissing = false;
  }

  /** Waits until the primary waits for the standby's acknowledgements, and notes the count of commits answered without one. */
  async semiSynchronous(): Promise<void> {
    const status = async (name: string) => (await this.primary.query<{ Value: string }>(`SHOW STATUS LIKE '${name}'`))[0]?.Value;
    await until(async () => Number(await status("Rpl_semi_sync_master_clients")) >= 1 && (await status("Rpl_semi_sync_master_status")) === "ON", `${this.standby.name} semi-synchronous`);
    this.unacknowledgedAtJoin = Number(await status("Rpl_semi_sync_master_no_tx"));
  }

  destroy(): Promise<void> {
    return this.destroyAll();
  }
}

/** A PostgreSQL primary and its synchronous standby, from the machine's binaries. */
export async function startPgFailoverPair(): Promise<FailoverPair> {
  const topology = await startTopology(1, { synchronousStandby: "replica1" });
  const [primary, standby] = topology.all() as [PgInstance, PgInstance];
  // Ask the server, not the harness, that the standby is synchronous before anything relies on it.
  await until(async () => (await primary.query("select 1 from pg_stat_replication where sync_state = 'sync'")).length === 1, "replica1 synchronous");
  return new PgPair([primary, standby], () => topology.destroy());
}

/** A MariaDB primary and its semi-synchronous replica, from the machine's binaries. */
export async function startMariaDbFailoverPair(): Promise<FailoverPair> {
  const topology = await startMariaDbTopology(1, { semiSyncReplica: "replica1" });
  const [primary, standby] = topology.all() as [MariaDbInstance, MariaDbInstance];
  const pair = new MariaDbPair([primary, standby], () => topology.destroy());
  await pair.semiSynchronous();
  return pair;
}
