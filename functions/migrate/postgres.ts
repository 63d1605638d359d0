/**
 * PostgreSQL for the migrator. The history lives in its own schema (`poolgate_migrations`) that the
 * logins cannot use; each migration runs in one transaction with its history row (DDL is
 * transactional). Logins are roles with LOGIN whose passwords are sent as SCRAM-SHA-256 verifiers,
 * never as text, so no statement or server log line can hold one. Grants are the README's grant script
 * (schemas/grants/postgres.sql, grant-script.ts): the read-write login gets SELECT, INSERT, UPDATE,
 * DELETE on the tables of schema public and USAGE, SELECT on its sequences; the read-only login
 * SELECT; both now and (default privileges of the migrating user) for tables created later; functions
 * are taken from PUBLIC; the idempotency record is the read-write login's alone. Neither may create
 * anything in public.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from "node:crypto";
import pg from "pg";
import type { AdminSession, AppliedMigration, ConnectionSettings, Credentials, LoginAccess, MigrationEngine } from "./migration-engine.js";
import { grantStatements, loginNames, requireScript } from "./grant-script.js";
import type { Migration } from "./migration-files.js";

/** Where the history of applied migrations lives (PostgreSQL and Aurora DSQL alike). */
export const HISTORY_SCHEMA = "poolgate_migrations";
/** pg_advisory_lock key: one migration run at a time per database. */
const LOCK_KEY = 7_461_330_021;
const INVALID_PASSWORD = "28P01";
const SCRAM_ITERATIONS = 4096;

/**
 * The SCRAM-SHA-256 verifier PostgreSQL stores for a password (RFC 5802/7677, PostgreSQL's format):
 * `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`. The generated passwords are printable
 * ASCII, which SASLprep leaves as they are.
 */
export function scramSha256Verifier(password: string, salt: Buffer = randomBytes(16)): string {
  const salted = pbkdf2Sync(password, salt, SCRAM_ITERATIONS, 32, "sha256");
  const clientKey = createHmac("sha256", salted).update("Client Key").digest();
  const storedKey = createHash("sha256").update(clientKey).digest();
  const serverKey = createHmac("sha256", salted).update("Server Key").digest();
  return `SCRAM-SHA-256$${SCRAM_ITERATIONS}:${salt.toString("base64")}$${storedKey.toString("base64")}:${serverKey.toString("base64")}`;
}

/** A migration session's pg settings (PostgreSQL and Aurora DSQL: "disable" serves the tests' local servers). */
export function clientConfig(settings: ConnectionSettings, credentials: Credentials): pg.ClientConfig {
  return {
    host: settings.host,
    port: settings.port,
    database: settings.database,
    user: credentials.username,
    password: credentials.password,
    ssl: settings.tls === "verify-full" ? { rejectUnauthorized: true, ...(settings.caCertificates === undefined ? {} : { ca: settings.caCertificates }) } : false,
    connectionTimeoutMillis: 10_000,
    application_name: "poolgate-migrations",
  };
}

const id = (name: string) => pg.escapeIdentifier(name);

/** The history, oldest first. */
export async function appliedMigrations(client: pg.Client): Promise<AppliedMigration[]> {
  const { rows } = await client.query<{ version: string; checksum: string }>(`select version::text as version, checksum from ${HISTORY_SCHEMA}.applied order by version`);
  return rows;
}

/** Records a migration as applied (in the caller's transaction, if one is open). */
/** Runs a migration and records it in one transaction: both or neither (also DSQL's way for files of DML only). */
export async function applyWithRecord(client: pg.Client, migration: Migration): Promise<void> {
  await client.query("begin");
  try {
    await client.query(migration.sql);
    await recordMigration(client, migration);
    await client.query("commit");
  } catch (err) {
    await client.query("rollback").catch(() => undefined);
    throw new Error(`migration ${migration.version}_${migration.name}.sql failed and was rolled back: ${(err as Error).message}`, { cause: err });
  }
}

export async function roleExists(client: pg.Client, username: string): Promise<boolean> {
  const { rowCount } = await client.query("select 1 from pg_roles where rolname = $1", [username]);
  return (rowCount ?? 0) > 0;
}

export async function recordMigration(client: pg.Client, migration: Migration): Promise<void> {
  await client.query(`insert into ${HISTORY_SCHEMA}.applied (version, name, checksum) values ($1, $2, $3)`, [migration.version, migration.name, migration.checksum]);
}

class PostgresAdminSession implements AdminSession {
  constructor(
    private readonly client: pg.Client,
    private readonly settings: ConnectionSettings,
  ) {}

  async lock(): Promise<void> {
    await this.client.query("select pg_advisory_lock($1)", [LOCK_KEY]);
  }

  async unlock(): Promise<void> {
    await this.client.query("select pg_advisory_unlock($1)", [LOCK_KEY]);
  }

  async ensureHistory(): Promise<void> {
    await this.client.query(`create schema if not exists ${HISTORY_SCHEMA}`);
    await this.client.query(`revoke all on schema ${HISTORY_SCHEMA} from public`);
    await this.client.query(
      `create table if not exists ${HISTORY_SCHEMA}.applied (version numeric primary key, name text not null, checksum text not null, applied_at timestamptz not null default now())`,
    );
  }

  applied(): Promise<AppliedMigration[]> {
    return appliedMigrations(this.client);
  }

  apply(migration: Migration): Promise<void> {
    return applyWithRecord(this.client, migration);
  }

  loginExists(username: string): Promise<boolean> {
    return roleExists(this.client, username);
  }

  async createLogin(login: Credentials): Promise<void> {
    await this.client.query(`create role ${id(login.username)} login password ${pg.escapeLiteral(scramSha256Verifier(login.password))}`);
  }

  async setPassword(login: Credentials): Promise<void> {
    await this.client.query(`alter role ${id(login.username)} password ${pg.escapeLiteral(scramSha256Verifier(login.password))}`);
  }

  /** The README's grant script, in one transaction: all its grants or none. */
  async grant(logins: readonly { username: string; access: LoginAccess }[], grantScript: string | undefined): Promise<void> {
    const statements = grantStatements("postgres", requireScript("postgres", grantScript), { database: this.settings.database, ...loginNames(logins) });
    await this.client.query("begin");
    try {
      for (const statement of statements) await this.client.query(statement);
      await this.client.query("commit");
    } catch (err) {
      await this.client.query("rollback").catch(() => undefined);
      throw new Error(`the grant script (schemas/grants/postgres.sql) failed and was rolled back: ${(err as Error).message}`, { cause: err });
    }
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}

export const postgresMigrationEngine: MigrationEngine = {
  kind: "postgres",

  async open(settings, admin) {
    const client = new pg.Client(clientConfig(settings, admin));
    // A dropped connection must reject the running query, not crash the process.
    client.on("error", () => undefined);
    await client.connect();
    return new PostgresAdminSession(client, settings);
  },

  async canLogIn(settings, login) {
    const client = new pg.Client(clientConfig(settings, login));
    client.on("error", () => undefined);
    try {
      await client.connect();
      return true;
    } catch (err) {
      if ((err as { code?: unknown }).code === INVALID_PASSWORD) return false;
      throw err;
    } finally {
      await client.end().catch(() => undefined);
    }
  },

  isAuthFailure: (err) => (err as { code?: unknown } | null)?.code === INVALID_PASSWORD,
};
