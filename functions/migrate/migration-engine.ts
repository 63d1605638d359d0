/**
 * What the migrator needs from an engine (postgres.ts, mysql.ts): an administrative session that
 * locks, keeps the migration history, applies a migration, creates the gateway's logins and grants
 * them their rights; and a check whether a login's password is accepted.
 */
import type { Migration } from "./migration-files.js";

/** Where to connect (the cluster's writer endpoint). */
export interface ConnectionSettings {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  /** verify-full: TLS with the certificate chain and host checked (the Lambda runtime's Amazon CAs). */
  readonly tls: "verify-full" | "disable";
  /** PEM of the authorities to trust instead of Node's store (default: the store, with NODE_EXTRA_CA_CERTS). */
  readonly caCertificates?: string;
}

export interface Credentials {
  readonly username: string;
  readonly password: string;
}

/** What a login may do. */
export type LoginAccess = "read-write" | "read-only";

/** A login the migrator keeps: its name, its access, and the passwords its secret holds. */
export interface LoginSpec extends Credentials {
  readonly access: LoginAccess;
  /** The secret's AWSPENDING password during a rotation, if any. */
  readonly pendingPassword?: string;
}

/** A migration recorded in the history. */
export interface AppliedMigration {
  readonly version: string;
  readonly checksum: string;
}

/** An administrative session (the master user). */
export interface AdminSession {
  /** Waits for the engine's advisory lock: one migration run at a time per database. */
  lock(): Promise<void>;
  unlock(): Promise<void>;
  /** Creates the history (its own schema or database, out of the logins' reach) when missing. */
  ensureHistory(): Promise<void>;
  applied(): Promise<AppliedMigration[]>;
  /** Runs the migration's SQL and records it (in one transaction where the engine has transactional DDL). */
  apply(migration: Migration): Promise<void>;
  loginExists(username: string): Promise<boolean>;
  createLogin(login: Credentials): Promise<void>;
  setPassword(login: Credentials): Promise<void>;
  /**
   * Grants each login its access to the application's tables, present and future: on PostgreSQL and
   * MySQL by running the README's grant script (`grantScript`, schemas/grants/<engine>.sql) with the
   * logins' names, which also makes the gateway's idempotency record; on Aurora DSQL by its own rules.
   */
  grant(logins: readonly { username: string; access: LoginAccess }[], grantScript: string | undefined): Promise<void>;
  close(): Promise<void>;
}

export interface MigrationEngine {
  readonly kind: "postgres" | "mysql" | "dsql";
  /** Opens an administrative session; a refused password rejects with an error `isAuthFailure` accepts. */
  open(settings: ConnectionSettings, admin: Credentials): Promise<AdminSession>;
  /** Whether the database accepts these credentials (false only when it refuses the password). */
  canLogIn(settings: ConnectionSettings, login: Credentials): Promise<boolean>;
  isAuthFailure(err: unknown): boolean;
}
