/**
 * Schema migrations against a test database on the local PostgreSQL, shared by the PostgreSQL and the
 * Aurora DSQL engines' tests: a run with the gateway's logins, a statement as one of them (the server
 * trusts the login; the grants decide), scratch copies of a migration set, and the clean-up of both.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { LoginSpec, MigrationEngine } from "../../functions/migrate/migration-engine.js";
import { loadMigrations } from "../../functions/migrate/migration-files.js";
import { type MigrationReport, type MigrationRun, runMigrations } from "../../functions/migrate/migrator.js";
import { ADMIN_URL } from "./postgres.js";

export interface LocalMigrationSetup {
  engine: MigrationEngine;
  /** The migration set's folder. */
  migrations: string;
  logins: readonly LoginSpec[];
  /** The test database's name (created in beforeAll, so asked for when needed). */
  database: () => string;
  /** The engine's grant script (PostgreSQL: schemas/grants/postgres.sql; Aurora DSQL has none). */
  grantScript: string | undefined;
}

export class LocalMigrations {
  private readonly admin = new URL(ADMIN_URL);
  private readonly scratch: string[] = [];

  constructor(private readonly setup: LocalMigrationSetup) {}

  run(overrides: Partial<MigrationRun> = {}): Promise<MigrationReport> {
    const admin = this.admin;
    return runMigrations({
      engine: this.setup.engine,
      settings: { host: admin.hostname, port: Number(admin.port || 5432), database: this.setup.database(), tls: "disable" },
      admin: { current: { username: decodeURIComponent(admin.username) || "postgres", password: decodeURIComponent(admin.password) } },
      logins: this.setup.logins,
      migrations: loadMigrations(this.setup.migrations),
      grantScript: this.setup.grantScript,
      ...overrides,
    });
  }

  /** Runs `sql` logged in as `user`: "ok", or the SQLSTATE it was refused with. */
  async as(user: string, sql: string): Promise<string> {
    const client = new pg.Client({ host: this.admin.hostname, port: Number(this.admin.port || 5432), database: this.setup.database(), user });
    await client.connect();
    try {
      await client.query(sql);
      return "ok";
    } catch (err) {
      return String((err as { code?: string }).code);
    } finally {
      await client.end();
    }
  }

  /** A scratch copy of the migration set, with `files` (name → SQL) added or replaced. */
  copy(files: Record<string, string> = {}): string {
    const dir = mkdtempSync(join(tmpdir(), "poolgate-migrations-"));
    this.scratch.push(dir);
    cpSync(this.setup.migrations, dir, { recursive: true });
    for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, name), sql);
    return dir;
  }

  /** Drops the logins' roles (cluster-wide, unlike the database) and the scratch copies. */
  async cleanUp(): Promise<void> {
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    try {
      for (const login of this.setup.logins) await admin.query(`drop role if exists ${login.username}`);
    } finally {
      await admin.end();
    }
    for (const dir of this.scratch) rmSync(dir, { recursive: true, force: true });
  }
}
