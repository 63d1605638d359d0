/**
 * The idempotency record of one cluster: a table in the cluster's own database (so a key is recorded
 * in the same transaction as the write it names, and survives whatever the write survives: another
 * gateway task, a failover). The store checks the table once (at start, and again after a failed try)
 * on a session of its own outside any transaction, creating it when it is missing and allowed to (MySQL
 * DDL commits implicitly; the grant scripts in schemas/grants/ create it for a least-privilege login);
 * claims, reads back and forgets keys on the session
 * it is handed; and deletes expired keys in bounded steps while this task uses the record.
 */
import type { GatewayConfig } from "../config/schema.js";
import type { Param } from "../../schemas/query.js";
import type { Engine, EngineConnection, EngineStatement, ExecuteOptions } from "../engines/engine.js";
import { statementMode } from "../engines/engine-statement.js";
import type { IdempotencySql } from "../engines/idempotency-sql.js";
import { GatewayError } from "../errors.js";
import { isDatabaseRefusal, isIdempotencyUnavailable } from "../failure-meaning.js";
import type { Logger } from "../logger.js";
import type { Clock, Timer } from "../clock.js";
import type { IdempotencyKey } from "./keyed-work.js";

export type IdempotencySettings = GatewayConfig["idempotency"];

/** A key as the table holds it (never an expired one). */
export interface FoundKey {
  readonly fingerprint: string;
  /** Null while the claiming transaction has not recorded its answer (only that transaction sees it so). */
  readonly answer: string | null;
}

/** The record's statements go as exactly one statement each. */
const ONE_STATEMENT = statementMode("one statement");

/** Answers are whole responses: far above any one result's own cap. */
const ANSWER_BYTES = 2 ** 30;

/**
 * Runs administrative work (the table's creation, cleanup) on a session of the current primary, on
 * the cluster's read-write login, outside any transaction: a session of its own, outside every pool,
 * so that it neither waits behind nor takes a caller's (the embedded database, which has one session,
 * lends its pooled one).
 */
export type AdminSession = <T>(timeoutMs: number, work: (connection: EngineConnection) => Promise<T>) => Promise<T>;

export class IdempotencyStore {
  readonly table: string;
  private ensured: Promise<void> | undefined;
  private used = false;
  private sweepTimer: Timer | undefined;

  private readonly sql: IdempotencySql;

  constructor(
    /** The cluster's engine: the record's SQL in its dialect, and its statements read by its reader. */
    private readonly engine: Pick<Engine, "idempotency" | "statement">,
    private readonly settings: IdempotencySettings,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly adminSession: AdminSession,
  ) {
    this.sql = engine.idempotency;
    this.table = settings.table ?? this.sql.defaultTable;
  }

  /** One of the record's statements, sent as exactly one statement (the server refuses a second). */
  private statement(sql: string, params: readonly Param[] = []): EngineStatement {
    return this.engine.statement(sql, params, ONE_STATEMENT);
  }

  /**
   * Makes sure the table is there and the read-write login may use it (once per task; again after a
   * failed try): found as it is, else created when createTable allows. Refused with
   * IDEMPOTENCY_UNAVAILABLE, naming the grant, when it is missing and cannot be created or is out of
   * the login's reach; DATABASE_UNAVAILABLE when the database could not be asked.
   */
  ensureTable(timeoutMs: number): Promise<void> {
    this.used = true;
    return this.check(timeoutMs);
  }

  /** ensureTable without marking the record used (the start's check: cleanup waits for the first key). */
  check(timeoutMs: number): Promise<void> {
    this.ensured ??= this.prepareTable(timeoutMs).catch((err: unknown) => {
      this.ensured = undefined;
      throw err;
    });
    return this.ensured;
  }

  private async prepareTable(timeoutMs: number): Promise<void> {
    try {
      await this.adminSession(timeoutMs, async (connection) => {
        const found = await this.probe(connection, timeoutMs);
        if (found === "usable") return;
        if (found === "lacks-rights") throw await this.unusable(connection, "the read-write login lacks rights on it", timeoutMs);
        if (found === "missing" && !this.settings.createTable) throw await this.unusable(connection, "it is missing (idempotency.createTable is false)", timeoutMs);
        // A database that could not answer the question (a flavour without the privilege functions) is
        // treated as before: created when allowed, then met by the first claim.
        if (this.settings.createTable) await this.createTable(connection, timeoutMs);
        if (found === "missing" && (await this.probe(connection, timeoutMs)) === "lacks-rights") throw await this.unusable(connection, "the read-write login lacks rights on it", timeoutMs);
      });
      this.logger.debug({ table: this.table }, "idempotency table ready");
    } catch (err) {
      if (isIdempotencyUnavailable(err)) throw err;
      throw new GatewayError("DATABASE_UNAVAILABLE", `the idempotency table ${this.table} could not be checked: ${describe(err)}`, { cause: err, final: true });
    }
  }

  /** Whether the table is there and usable by this session's login. */
  private async probe(connection: EngineConnection, timeoutMs: number): Promise<"usable" | "lacks-rights" | "missing" | "unknown"> {
    try {
      const { rows } = await connection.execute(this.statement(this.sql.usable(this.table)), options(timeoutMs));
      const [row] = rows as [unknown[]] | [];
      if (row === undefined || row[0] === null) return "missing";
      return row[0] === true || Number(row[0]) === 1 ? "usable" : "lacks-rights";
    } catch (err) {
      if (this.sql.isMissing(err)) return "missing";
      if (this.sql.isDenied(err)) return "lacks-rights";
      if (isDatabaseRefusal(err)) return "unknown";
      throw err;
    }
  }

  private async createTable(connection: EngineConnection, timeoutMs: number): Promise<void> {
    for (const statement of this.sql.create(this.table)) {
      try {
        await connection.execute(this.statement(statement), options(timeoutMs));
      } catch (err) {
        // Two tasks creating it at once: PostgreSQL's catalog says so with a unique violation.
        if (this.sql.isKeyTaken(err)) continue;
        if (this.sql.isDenied(err)) throw await this.unusable(connection, "it is missing and the read-write login may not create it", timeoutMs);
        throw err;
      }
    }
  }

  /** The refusal that names what the operator must run. */
  private async unusable(connection: EngineConnection, why: string, timeoutMs: number): Promise<GatewayError> {
    const login = await connection.execute(this.statement("SELECT current_user"), options(timeoutMs)).then(
      ({ rows }) => {
        const [row] = rows as [unknown[]] | [];
        return typeof row?.[0] === "string" ? row[0] : "<read-write login>";
      },
      () => "<read-write login>",
    );
    return new GatewayError(
      "IDEMPOTENCY_UNAVAILABLE",
      `the idempotency table ${this.table} cannot be used: ${why}. Create it and grant it as ${this.sql.grantScript} does, or run: ${this.sql.grants(this.table, login)}`,
      { final: true },
    );
  }

  /** Claims the key in the session's open transaction; throws the database's refusal when it exists (isKeyTaken). */
  async claim(connection: EngineConnection, key: IdempotencyKey, answer: string | null, timeoutMs: number): Promise<void> {
    const now = this.clock.wallNow();
    await connection.execute(this.statement(this.sql.claim(this.table), [key.principal, key.key, key.fingerprint, now, now + this.settings.ttlMs, answer]), options(timeoutMs));
  }

  /** Records the answer of the claimed key, in the claiming transaction. */
  async record(connection: EngineConnection, key: IdempotencyKey, answer: string, timeoutMs: number): Promise<void> {
    await connection.execute(this.statement(this.sql.record(this.table), [answer, key.principal, key.key]), options(timeoutMs));
  }

  /** Whether the failure is the claim of a key that is already recorded. */
  isKeyTaken(err: unknown): boolean {
    return this.sql.isKeyTaken(err);
  }

  /** The key as recorded, or undefined when absent; an expired key is deleted and counts as absent. */
  async find(connection: EngineConnection, key: Omit<IdempotencyKey, "fingerprint">, timeoutMs: number): Promise<FoundKey | undefined> {
    const { rows } = await connection.execute(this.statement(this.sql.find(this.table), [key.principal, key.key]), options(timeoutMs));
    const [row] = rows as [unknown[]] | [];
    if (row === undefined) return undefined;
    const [fingerprint, answer, expiresAtMs] = row as [string, string | null, string | number];
    const now = this.clock.wallNow();
    if (Number(expiresAtMs) > now) return { fingerprint, answer };
    await connection.execute(this.statement(this.sql.forget(this.table), [key.principal, key.key, now]), options(timeoutMs));
    return undefined;
  }

  /** Deletes expired keys every cleanupIntervalMs, on clusters this task has recorded keys in. */
  start(): void {
    if (this.settings.cleanupIntervalMs === 0) return;
    this.sweepTimer?.cancel();
    this.sweepTimer = this.clock.every(this.settings.cleanupIntervalMs, () => {
      if (this.used) void this.sweep(Math.min(this.settings.cleanupIntervalMs, 30000)).catch((err: unknown) => this.logger.warn({ table: this.table, err: describe(err) }, "idempotency cleanup failed"));
    });
  }

  stop(): void {
    this.sweepTimer?.cancel();
  }

  /** Deletes at most cleanupBatchSize expired keys; resolves how many went. Tests call it directly. */
  async sweep(timeoutMs: number): Promise<number> {
    return this.adminSession(timeoutMs, async (connection) => {
      const { rowCount } = await connection.execute(this.statement(this.sql.sweep(this.table, this.settings.cleanupBatchSize), [this.clock.wallNow()]), options(timeoutMs));
      return rowCount ?? 0;
    });
  }
}

function options(timeoutMs: number): ExecuteOptions {
  return { timeoutMs, bigNumbers: "string", maxResultBytes: ANSWER_BYTES, maxResultRows: 1 };
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The refusal of a key used before for another request. */
export function keyReused(): GatewayError {
  return new GatewayError(
    "IDEMPOTENCY_KEY_REUSED",
    `this idempotency key was already used by this principal for a different request (other SQL, parameters, options, cluster or transaction); nothing ran. Use a new key for a new request`,
    { issues: [{ path: "idempotencyKey", message: "already used for a different request" }] },
  );
}
