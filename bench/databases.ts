/**
 * The bench's databases on the local servers: `poolgate_bench` on PostgreSQL and on MariaDB, with the
 * seeded `accounts` table the point selects read, report 4's insert table, report 2's counter and the
 * cache ledger's.
 * Created when missing, reseeded when the seed does not match, and left in place between runs.
 */
import mysql from "mysql2/promise";
import pg from "pg";
import { INSERT_TABLE, SEED_ROWS } from "./workload.js";

export const DATABASE = "poolgate_bench";
/** The cache part's ledger: one counter (id 1) that its writers only raise, reset to 0 by each prepare. */
export const LEDGER_TABLE = "cache_ledger";

/** The admin URL with the bench database as its path. */
export function benchUrlOf(adminUrl: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${DATABASE}`;
  return url.toString();
}

async function withPg<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`the bench needs the local PostgreSQL at ${url} (trust auth); it is not reachable: ${(err as Error).message}`, { cause: err });
  }
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates and seeds the PostgreSQL bench database; answers the server's version. */
export async function preparePostgres(adminUrl: string): Promise<string> {
  const version = await withPg(adminUrl, async (admin) => {
    const exists = await admin.query("select 1 from pg_database where datname = $1", [DATABASE]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${DATABASE}`);
    return String((await admin.query<{ v: string }>("select current_setting('server_version') as v")).rows[0]?.v);
  });
  await withPg(benchUrlOf(adminUrl), async (db) => {
    await db.query("create table if not exists accounts (id int primary key, name text not null, balance int not null)");
    const { rows } = await db.query<{ n: number }>("select count(*)::int as n from accounts");
    if (rows[0]?.n !== SEED_ROWS) {
      await db.query("truncate accounts");
      await db.query(`insert into accounts select g, 'account-' || g, g * 10 from generate_series(1, ${SEED_ROWS}) g`);
      await db.query("analyze accounts");
    }
    await db.query(`create unlogged table if not exists ${INSERT_TABLE} (id bigserial primary key, payload text not null)`);
    await db.query(`truncate ${INSERT_TABLE}`);
    await db.query("create table if not exists counters (id int primary key, n int not null)");
    await db.query(`create table if not exists ${LEDGER_TABLE} (id int primary key, n bigint not null)`);
    await db.query(`delete from ${LEDGER_TABLE}`);
    await db.query(`insert into ${LEDGER_TABLE} values (1, 0)`);
  });
  return `PostgreSQL ${version}`;
}

/** Empties report 4's table between targets, so every target inserts into the same-sized table. */
export async function truncateInserts(benchUrl: string): Promise<void> {
  await withPg(benchUrl, (db) => db.query(`truncate ${INSERT_TABLE}`));
}

/** Creates and seeds the MariaDB/MySQL bench database; answers the server's version. */
export async function prepareMysql(adminUrl: string): Promise<string> {
  let admin: mysql.Connection;
  try {
    admin = await mysql.createConnection({ uri: adminUrl, connectTimeout: 5000 });
  } catch (err) {
    throw new Error(`the bench needs the local MariaDB/MySQL at ${adminUrl}; it is not reachable: ${(err as Error).message}`, { cause: err });
  }
  try {
    await admin.query(`CREATE DATABASE IF NOT EXISTS ${DATABASE}`);
    await admin.query(`USE ${DATABASE}`);
    await admin.query("create table if not exists accounts (id int primary key, name varchar(40) not null, balance int not null) engine=InnoDB");
    const [rows] = await admin.query("select count(*) as n from accounts");
    if (Number((rows as { n: number }[])[0]?.n) !== SEED_ROWS) {
      await admin.query("truncate accounts");
      const values = Array.from({ length: SEED_ROWS }, (_, i) => [i + 1, `account-${i + 1}`, (i + 1) * 10]);
      await admin.query("insert into accounts values ?", [values]);
      await admin.query("analyze table accounts");
    }
    await admin.query(`create table if not exists ${LEDGER_TABLE} (id int primary key, n bigint not null) engine=InnoDB`);
    await admin.query(`delete from ${LEDGER_TABLE}`);
    await admin.query(`insert into ${LEDGER_TABLE} values (1, 0)`);
    const [version] = await admin.query("select version() as v");
    return `MariaDB/MySQL ${String((version as { v: string }[])[0]?.v)}`;
  } finally {
    await admin.end();
  }
}
