/**
 * MySQL (Aurora MySQL; tested on MariaDB) for the migrator. The history lives in a database of its own
 * (`<database>_migrations`) that the logins have no grant on. MySQL commits DDL as it runs, so a
 * migration is not rolled back when it fails part way: write them re-runnable (IF NOT EXISTS). Logins
 * are users `'<name>'@'%'`; the server rewrites passwords out of its logs. Grants are the README's
 * grant script (schemas/grants/mysql.sql, grant-script.ts), per database, so they cover tables created
 * later: SELECT, INSERT, UPDATE, DELETE, EXECUTE for the read-write login, SELECT for the read-only
 * one; the idempotency record, in a database of its own, is the read-write login's alone.
 */
import mysql from "mysql2/promise";
import type { AdminSession, AppliedMigration, ConnectionSettings, Credentials, LoginAccess, MigrationEngine } from "./migration-engine.js";
import { grantStatements, loginNames, requireScript } from "./grant-script.js";
import type { Migration } from "./migration-files.js";

const LOCK_NAME = "poolgate_migrations";
const LOCK_WAIT_S = 600;
const ACCESS_DENIED = 1045;

function connectionOptions(settings: ConnectionSettings, credentials: Credentials, multipleStatements: boolean): mysql.ConnectionOptions {
  return {
    host: settings.host,
    port: settings.port,
    database: settings.database,
    user: credentials.username,
    password: credentials.password,
    ...(settings.tls === "verify-full" ? { ssl: { rejectUnauthorized: true, ...(settings.caCertificates === undefined ? {} : { ca: settings.caCertificates }) } } : {}),
    connectTimeout: 10_000,
    multipleStatements,
  };
}

class MysqlAdminSession implements AdminSession {
  private readonly history: string;

  constructor(
    private readonly connection: mysql.Connection,
    private readonly settings: ConnectionSettings,
  ) {
    this.history = `${settings.database}_migrations`;
  }

  async lock(): Promise<void> {
    const [rows] = await this.connection.query<mysql.RowDataPacket[]>("select get_lock(?, ?) as locked", [LOCK_NAME, LOCK_WAIT_S]);
    if (rows[0]?.locked !== 1) throw new Error(`another migration run held the lock ${LOCK_NAME} for ${LOCK_WAIT_S} s`);
  }

  async unlock(): Promise<void> {
    await this.connection.query("select release_lock(?)", [LOCK_NAME]);
  }

  async ensureHistory(): Promise<void> {
    await this.connection.query("create database if not exists ??", [this.history]);
    await this.connection.query(
      "create table if not exists ??.applied (version decimal(20,0) primary key, name varchar(200) not null, checksum char(64) not null, applied_at timestamp(3) not null default current_timestamp(3))",
      [this.history],
    );
  }

  async applied(): Promise<AppliedMigration[]> {
    const [rows] = await this.connection.query<mysql.RowDataPacket[]>("select cast(version as char) as version, checksum from ??.applied order by version", [this.history]);
    return rows.map((row) => ({ version: String(row.version), checksum: String(row.checksum) }));
  }

  async apply(migration: Migration): Promise<void> {
    try {
      await this.connection.query(migration.sql);
    } catch (err) {
      throw new Error(`migration ${migration.version}_${migration.name}.sql failed (MySQL commits DDL as it runs: what ran before the failure stays): ${(err as Error).message}`, { cause: err });
    }
    await this.connection.query("insert into ??.applied (version, name, checksum) values (?, ?, ?)", [this.history, migration.version, migration.name, migration.checksum]);
  }

  async loginExists(username: string): Promise<boolean> {
    const [rows] = await this.connection.query<mysql.RowDataPacket[]>("select 1 from mysql.user where user = ? and host = '%'", [username]);
    return rows.length > 0;
  }

  async createLogin(login: Credentials): Promise<void> {
    await this.connection.query("create user ?@'%' identified by ?", [login.username, login.password]);
  }

  async setPassword(login: Credentials): Promise<void> {
    await this.connection.query("alter user ?@'%' identified by ?", [login.username, login.password]);
  }

  /** The README's grant script, statement by statement (MySQL commits each as it runs; each can run again). */
  async grant(logins: readonly { username: string; access: LoginAccess }[], grantScript: string | undefined): Promise<void> {
    const statements = grantStatements("mysql", requireScript("mysql", grantScript), { database: this.settings.database, ...loginNames(logins) });
    for (const statement of statements) {
      try {
        await this.connection.query(statement);
      } catch (err) {
        throw new Error(`the grant script (schemas/grants/mysql.sql) failed at: ${statement.split("\n")[0] ?? ""}: ${(err as Error).message}`, { cause: err });
      }
    }
  }

  async close(): Promise<void> {
    await this.connection.end();
  }
}

export const mysqlMigrationEngine: MigrationEngine = {
  kind: "mysql",

  async open(settings, admin) {
    const connection = await mysql.createConnection(connectionOptions(settings, admin, true));
    connection.on("error", () => undefined);
    return new MysqlAdminSession(connection, settings);
  },

  async canLogIn(settings, login) {
    let connection: mysql.Connection | undefined;
    try {
      connection = await mysql.createConnection(connectionOptions(settings, login, false));
      return true;
    } catch (err) {
      if ((err as { errno?: unknown }).errno === ACCESS_DENIED) return false;
      throw err;
    } finally {
      await connection?.end().catch(() => undefined);
    }
  },

  isAuthFailure: (err) => (err as { errno?: unknown } | null)?.errno === ACCESS_DENIED,
};
