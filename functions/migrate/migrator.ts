/**
 * One migration run, the same on every deploy and idempotent: take the lock, make sure the history
 * exists, make sure the gateway's logins exist and their secrets' passwords work, apply the migrations
 * not yet applied (in version order, refusing an applied one that was edited or a new one older than
 * the latest applied), then grant the logins their access to every table, present and future, as the
 * README's grant script does (it also makes the gateway's idempotency record).
 */
import type { AdminSession, ConnectionSettings, Credentials, LoginSpec, MigrationEngine } from "./migration-engine.js";
import { compareVersions, type Migration } from "./migration-files.js";

/** What a run did. */
export interface MigrationReport {
  /** Versions applied by this run, in order. */
  applied: string[];
  /** Versions found already applied. */
  alreadyApplied: number;
  /** Per login: created, its password set again from the secret, or left as it was. */
  logins: Record<string, "created" | "password-set" | "unchanged">;
}

export class MigrationRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MigrationRefusedError";
  }
}

export interface MigrationRun {
  engine: MigrationEngine;
  settings: ConnectionSettings;
  /** The master user: AWSCURRENT, and AWSPENDING to try when a rotation is under way. */
  admin: { current: Credentials; pending?: Credentials | undefined };
  logins: readonly LoginSpec[];
  migrations: readonly Migration[];
  /** The engine's grant script (schemas/grants/<engine>.sql, grant-script.ts), run after the migrations; Aurora DSQL has none. */
  grantScript: string | undefined;
  log?: (message: string, details?: Record<string, unknown>) => void;
}

/** Opens the admin session, with AWSPENDING when the database refuses AWSCURRENT (a rotation mid-way). */
async function openAdmin(run: MigrationRun): Promise<AdminSession> {
  try {
    return await run.engine.open(run.settings, run.admin.current);
  } catch (err) {
    if (!run.admin.pending || !run.engine.isAuthFailure(err)) throw err;
    run.log?.("the master password was refused; trying the secret's AWSPENDING version");
    return run.engine.open(run.settings, run.admin.pending);
  }
}

/** Creates a missing login; sets the secret's password again on one that accepts neither of its secret's passwords. */
async function keepLogin(run: MigrationRun, session: AdminSession, login: LoginSpec): Promise<MigrationReport["logins"][string]> {
  if (!(await session.loginExists(login.username))) {
    await session.createLogin(login);
    return "created";
  }
  if (await run.engine.canLogIn(run.settings, login)) return "unchanged";
  // Mid-rotation the database already holds the pending password: leave it to the rotation.
  if (login.pendingPassword !== undefined && (await run.engine.canLogIn(run.settings, { username: login.username, password: login.pendingPassword }))) return "unchanged";
  await session.setPassword(login);
  return "password-set";
}

/** Runs the migrations; see the module comment. */
export async function runMigrations(run: MigrationRun): Promise<MigrationReport> {
  const session = await openAdmin(run);
  const report: MigrationReport = { applied: [], alreadyApplied: 0, logins: {} };
  try {
    await session.lock();
    try {
      await session.ensureHistory();
      for (const login of run.logins) report.logins[login.username] = await keepLogin(run, session, login);
      const applied = new Map((await session.applied()).map((entry) => [BigInt(entry.version).toString(), entry]));
      const latest = [...applied.values()].map((entry) => entry.version).sort(compareVersions).at(-1);
      for (const migration of run.migrations) {
        const recorded = applied.get(BigInt(migration.version).toString());
        if (recorded) {
          if (recorded.checksum !== migration.checksum) {
            throw new MigrationRefusedError(`migration ${migration.version}_${migration.name}.sql was changed after it was applied; add a new migration instead of editing an applied one`);
          }
          report.alreadyApplied++;
          continue;
        }
        if (latest !== undefined && compareVersions(migration.version, latest) < 0) {
          throw new MigrationRefusedError(`migration ${migration.version}_${migration.name}.sql is older than ${latest}, the latest applied; give it a version above ${latest}`);
        }
        run.log?.("applying migration", { version: migration.version, name: migration.name });
        await session.apply(migration);
        report.applied.push(migration.version);
      }
      await session.grant(run.logins, run.grantScript);
    } finally {
      // Ending the session releases the lock as well: a failed unlock must not hide the run's own error.
      await session.unlock().catch(() => undefined);
    }
  } finally {
    await session.close().catch(() => undefined);
  }
  return report;
}
