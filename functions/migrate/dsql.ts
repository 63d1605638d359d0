/**
 * Aurora DSQL for the migrator, connected as `admin` with a DbConnectAdmin token (handler.ts signs it).
 * What differs from PostgreSQL, and why (Aurora DSQL User Guide):
 * - no advisory locks: the lock is a no-op; one run at a time comes from the function's reserved
 *   concurrency of 1 and CloudFormation's one update of the resource at a time;
 * - one DDL statement per transaction and no DDL with DML: a DDL file is run alone (its own
 *   transaction) and recorded in the next one, so a run stopped between the two runs it again —
 *   write DDL files re-runnable (IF NOT EXISTS); files of DML only run in one transaction with their
 *   record. A file that mixes them is refused before anything runs (sql-statements.ts);
 * - no passwords: a login is a role `WITH LOGIN` mapped to the gateway's IAM role with `AWS IAM GRANT`
 *   (checked in sys.iam_pg_role_mappings on every run, so a replaced task role is mapped again);
 *   the gateway signs DbConnect tokens for it;
 * - grants are made again on every run (tables created later get theirs at the next deploy, which is
 *   the one that creates them) rather than by ALTER DEFAULT PRIVILEGES. No sequence grants: DSQL has
 *   no serial columns, and identity columns need none. No CREATE on schema public is granted (DSQL
 *   is PostgreSQL 16-compatible, where PUBLIC has none by default), so the roles make no DDL there.
 */
import pg from "pg";
import type { AdminSession, AppliedMigration, Credentials, LoginAccess, MigrationEngine } from "./migration-engine.js";
import type { Migration } from "./migration-files.js";
import { appliedMigrations, applyWithRecord, clientConfig, HISTORY_SCHEMA, recordMigration, roleExists } from "./postgres.js";
import { dsqlMigrationProblem, isDdl, splitStatements } from "./sql-statements.js";

const AUTH_FAILURES = new Set(["28000", "28P01"]);

// DSQL accepts TLS only (the stack always asks for verify-full); its certificates chain to Amazon Root
// CA 1, in Node's store, so clientConfig's verify-full needs no CA bundle.
const id = (name: string) => pg.escapeIdentifier(name);

class DsqlAdminSession implements AdminSession {
  constructor(
    private readonly client: pg.Client,
    private readonly gatewayRoleArn: string,
  ) {}

  async lock(): Promise<void> {}

  async unlock(): Promise<void> {}

  async ensureHistory(): Promise<void> {
    // Each statement on its own: one DDL per transaction.
    await this.client.query(`create schema if not exists ${HISTORY_SCHEMA}`);
    await this.client.query(
      `create table if not exists ${HISTORY_SCHEMA}.applied (version bigint primary key, name text not null, checksum text not null, applied_at timestamptz not null default now())`,
    );
  }

  applied(): Promise<AppliedMigration[]> {
    return appliedMigrations(this.client);
  }

  async apply(migration: Migration): Promise<void> {
    const problem = dsqlMigrationProblem(migration.sql);
    if (problem) throw new Error(`migration ${migration.version}_${migration.name}.sql cannot run on Aurora DSQL: ${problem}`);
    const [only, ...more] = splitStatements(migration.sql);
    if (only !== undefined && more.length === 0 && isDdl(only)) {
      // One DDL statement: its own transaction, then the record in the next.
      try {
        await this.client.query(only);
      } catch (err) {
        throw new Error(`migration ${migration.version}_${migration.name}.sql failed: ${(err as Error).message}`, { cause: err });
      }
      await recordMigration(this.client, migration);
      return;
    }
    await applyWithRecord(this.client, migration);
  }

  loginExists(username: string): Promise<boolean> {
    return roleExists(this.client, username);
  }

  async createLogin(login: Credentials): Promise<void> {
    await this.client.query(`create role ${id(login.username)} with login`);
  }

  setPassword(login: Credentials): Promise<void> {
    return Promise.reject(new Error(`Aurora DSQL roles have no password (${login.username} logs in with IAM tokens)`));
  }

  async grant(logins: readonly { username: string; access: LoginAccess }[]): Promise<void> {
    for (const login of logins) {
      const role = id(login.username);
      const { rowCount } = await this.client.query("select 1 from sys.iam_pg_role_mappings where pg_role_name = $1 and arn = $2", [login.username, this.gatewayRoleArn]);
      if ((rowCount ?? 0) === 0) await this.client.query(`aws iam grant ${role} to ${pg.escapeLiteral(this.gatewayRoleArn)}`);
      await this.client.query(`grant usage on schema public to ${role}`);
      const tables = login.access === "read-write" ? "select, insert, update, delete" : "select";
      await this.client.query(`grant ${tables} on all tables in schema public to ${role}`);
    }
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}

/** The engine for one cluster, whose logins are mapped to `gatewayRoleArn` (the gateway's task role). */
export function dsqlMigrationEngine(gatewayRoleArn: string): MigrationEngine {
  return {
    kind: "dsql",

    async open(settings, admin) {
      const client = new pg.Client(clientConfig(settings, admin));
      client.on("error", () => undefined);
      await client.connect();
      return new DsqlAdminSession(client, gatewayRoleArn);
    },

    // No passwords to check: whether the gateway may log in is the IAM mapping, which grant() keeps.
    canLogIn: () => Promise.resolve(true),

    isAuthFailure: (err) => AUTH_FAILURES.has(String((err as { code?: unknown } | null)?.code)),
  };
}
