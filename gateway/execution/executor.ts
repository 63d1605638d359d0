/**
 * Runs statements outside interactive transactions: one autocommit statement, or an atomic batch
 * (BEGIN; statements; COMMIT on one connection), on the endpoint the router picks. Both are retried as
 * a whole, until the request's deadline (its timeoutMs), when the database rolled them back for a
 * conflict, when the connection was lost before anything was committed, when a demoted primary
 * refused a write, or when no connection could be had where the topology no longer points (a caller
 * queued on a primary's pool moves on the moment it is not the primary any more); writes answer with
 * a consistency token, and failures that smell of failover are reported to the topology.
 */
import type { ErrorCode } from "../../schemas/errors.js";
import type { BatchRequest, Intent, Param, QueryRequest } from "../../schemas/query.js";
import type { GatewayConfig } from "../config/schema.js";
import type { PoolSet } from "../clusters/pool-set.js";
import type { EngineConnection, ExecuteOptions, StatementResult } from "../engines/engine.js";
import type { SqlReader } from "../engines/sql-analysis.js";
import { GatewayError } from "../errors.js";
import type { Clock } from "../pool/clock.js";
import type { Pool } from "../pool/pool.js";
import type { PoolEntry } from "../pool/pool-entry.js";
import type { RouteRequest, Router } from "../routing/router.js";
import type { Endpoint } from "../topology/endpoint.js";
import type { Topology } from "../topology/topology.js";
import { type Attempted, type RetrySettings, runWithRetry } from "./retry.js";
import { type RunAs, UNRESTRICTED } from "./run-as.js";
import { executeOptions } from "./run-options.js";

/** How another surface (the Data API) asks for the same execution with its own rules. */
export interface ExecutionPolicy {
  /** Run on the primary whatever the statement's intent (the Data API runs everything on the writer). */
  primaryOnly?: boolean;
  /** Skip the consistency token (a surface that has nowhere to return it saves the round trip). */
  withoutToken?: boolean;
  /** A smaller result cap than limits.maxResultBytes. */
  maxResultBytes?: number;
}

export interface Written<T> {
  value: T;
  /** Set after a write: where a replica must have replayed to show it. */
  consistencyToken: string | undefined;
}

/** A timeout or conflict in SQL that commits on its own does not mean "nothing was applied". */
function partOfItMayHaveCommitted(err: unknown): unknown {
  if (!(err instanceof GatewayError) || !["STATEMENT_TIMEOUT", "SERIALIZATION_FAILURE", "CONNECTION_LOST"].includes(err.code)) return err;
  return new GatewayError("OUTCOME_UNKNOWN", `${err.message}; the SQL contains its own transaction control, so part of it may have been committed`, {
    cause: err,
    database: err.database,
  });
}

function withPolicy(options: ExecuteOptions, policy: ExecutionPolicy): ExecuteOptions {
  return policy.maxResultBytes === undefined ? options : { ...options, maxResultBytes: Math.min(options.maxResultBytes, policy.maxResultBytes) };
}


/**
 * Asks the session's instance for its role: a replica, or a session lost on the way, confirms a
 * demoted primary. A session in a failed transaction cannot answer; with `mayRollBack` (the gateway's
 * own statement or batch, which has failed anyway) it is rolled back and asked again, otherwise (the
 * caller's open transaction) the refusal is taken as the caller's own and the monitor stays the judge.
 */
export async function instanceIsReadOnly(connection: EngineConnection, timeoutMs: number, mayRollBack: boolean): Promise<boolean> {
  const ask = () => connection.inspect(timeoutMs).then((state) => state.role === "replica", (err: unknown) => err);
  let answer = await ask();
  if (answer instanceof GatewayError && answer.code === "DATABASE_ERROR" && mayRollBack) {
    await connection.rollback(timeoutMs).catch(() => undefined);
    answer = await ask();
  }
  if (typeof answer === "boolean") return answer;
  return !(answer instanceof GatewayError && answer.code === "DATABASE_ERROR");
}

/**
 * A read-only principal's statements: on its read-only login where one is configured, in a READ ONLY
 * transaction (on MySQL the session's default access mode too), one statement per string, ending in
 * ROLLBACK so that nothing it did can persist even if a write got past READ ONLY. A statement that
 * ended the transaction is an error. Nothing commits, so a session lost on the way is safe to run again.
 */
// `options` come from executeOptions with a read-only RunAs: one statement per string already.
async function readOnlyUnit(
  connection: EngineConnection,
  statements: readonly { sql: string; params: readonly Param[] }[],
  options: ExecuteOptions,
  isolation?: BatchRequest["isolation"],
): Promise<StatementResult[]> {
  try {
    await connection.begin({ isolation, readOnly: true, lockReadOnly: true }, options.timeoutMs);
    const results: StatementResult[] = [];
    for (const statement of statements) {
      results.push(await connection.execute(statement.sql, statement.params, options));
      if (!connection.inTransaction) throw new GatewayError("FORBIDDEN", "this principal may only read: the statement ended the read-only transaction");
    }
    return results;
  } catch (err) {
    throw readOnlyFailure(err);
  } finally {
    if (connection.alive) await connection.rollback(options.timeoutMs).catch(() => undefined);
  }
}

/** A write the database refused in a read-only principal's transaction (READ ONLY, or its login's grants) is a permission error. */
export function readOnlyFailure(err: unknown): unknown {
  if (!(err instanceof GatewayError)) return err;
  if (err.code === "OUTCOME_UNKNOWN") {
    return new GatewayError("CONNECTION_LOST", `${err.message} (read-only work: nothing was committed)`, { cause: err });
  }
  if (err.code === "DATABASE_ERROR" && err.refusedAsWrite) {
    return new GatewayError("FORBIDDEN", `this principal may only read; the database refused: ${err.message}`, { cause: err, database: err.database });
  }
  return err;
}

function isReadOnlyRefusal(err: unknown): boolean {
  return err instanceof GatewayError && err.code === "DATABASE_ERROR" && err.refusedAsReadOnly;
}

/** Batches and interactive transactions: a hidden COMMIT must not end them (see ExecuteOptions.gatewayTransaction). */
export function inGatewayTransaction(options: ExecuteOptions): ExecuteOptions {
  return { ...options, gatewayTransaction: true };
}

export class Executor {
  /** Told the code of every failure the executor retries (the metrics count them). */
  onRetry: ((code: ErrorCode) => void) | undefined;

  constructor(
    private readonly router: Router,
    private readonly topology: Topology,
    private readonly pools: PoolSet,
    private readonly reader: SqlReader,
    private readonly config: GatewayConfig,
    private readonly clock: Clock,
  ) {}

  query(request: QueryRequest, policy: ExecutionPolicy = {}, runAs: RunAs = UNRESTRICTED): Promise<Attempted<Written<StatementResult>>> {
    const options = withPolicy(executeOptions(this.config, request, runAs), policy);
    const params = request.params ?? [];
    const analysis = this.reader.analyse(request.sql);
    const intent = request.intent ?? analysis.intent;
    let route = this.route(intent, request, options.timeoutMs);
    if (runAs.readOnly) {
      this.refuseForReadOnly([request.sql]);
      return this.retrying(this.config.retry, route, async () => {
        const endpoint = await this.endpointFor(route, policy);
        const [value] = await this.onEndpoint(endpoint, intent, (connection) => readOnlyUnit(connection, [{ sql: request.sql, params }], this.within(options, route)), runAs, route.deadline);
        return { value: value as StatementResult, consistencyToken: undefined };
      });
    }
    // SQL with its own COMMIT (or, on MySQL, several statements) may have committed part of its work
    // before failing: run it once only.
    const controlsTransactions = analysis.commitsInParts;
    const retry = controlsTransactions ? { ...this.config.retry, maxAttempts: 1 } : this.config.retry;
    return this.retrying(retry, route, async () => {
      const endpoint = await this.endpointFor(route, policy);
      const run = (target: Endpoint) =>
        this.onEndpoint(target, route.intent, async (connection) => {
          const value = await connection.execute(request.sql, params, this.within(options, route)).catch((err: unknown) => {
            throw controlsTransactions ? partOfItMayHaveCommitted(err) : err;
          });
          return { value, consistencyToken: policy.withoutToken ? undefined : await this.tokenAfter(route.intent, connection, options.timeoutMs) };
        }, runAs, route.deadline);
      try {
        return await run(endpoint);
      } catch (err) {
        // A "read" that wrote after all (a user function not in routing.writingFunctions): a replica
        // refused it, so nothing was applied; it runs on the primary, as a write.
        if (!(route.intent === "read" && endpoint.role === "replica" && isReadOnlyRefusal(err))) throw err;
        route = { ...route, intent: "write" };
        return run(await this.endpointFor(route, policy));
      }
    });
  }

  batch(request: BatchRequest, policy: ExecutionPolicy = {}, runAs: RunAs = UNRESTRICTED): Promise<Attempted<Written<StatementResult[]>>> {
    this.refuseTransactionControl(request.statements.map((statement) => statement.sql), "a batch");
    const options = inGatewayTransaction(withPolicy(executeOptions(this.config, request, runAs), policy));
    const intent: Intent = request.readOnly || runAs.readOnly ? "read" : "write";
    const route = this.route(intent, request, options.timeoutMs);
    if (runAs.readOnly) {
      this.refuseForReadOnly(request.statements.map((statement) => statement.sql));
      const statements = request.statements.map((statement) => ({ sql: statement.sql, params: statement.params ?? [] }));
      return this.retrying(this.config.retry, route, async () => {
        const endpoint = await this.endpointFor(route, policy);
        const value = await this.onEndpoint(endpoint, intent, (connection) => readOnlyUnit(connection, statements, this.within(options, route), request.isolation), runAs, route.deadline);
        return { value, consistencyToken: undefined };
      });
    }
    return this.retrying(this.config.retry, route, async () => {
      const endpoint = await this.endpointFor(route, policy);
      return this.onEndpoint(endpoint, intent, async (connection) => {
        const within = this.within(options, route);
        let committing = false;
        try {
          await connection.begin({ isolation: request.isolation, readOnly: request.readOnly }, within.timeoutMs);
          const results: StatementResult[] = [];
          for (const statement of request.statements) {
            results.push(await connection.execute(statement.sql, statement.params ?? [], within));
          }
          committing = true;
          if ((await connection.commit(within.timeoutMs)) === "rolled back") {
            throw new GatewayError("TRANSACTION_ABORTED", "the database rolled the batch back at COMMIT");
          }
          return { value: results, consistencyToken: policy.withoutToken ? undefined : await this.tokenAfter(intent, connection, options.timeoutMs) };
        } catch (err) {
          // Before COMMIT was sent, a lost session means the transaction rolled back: safe to run again.
          if (!committing && err instanceof GatewayError && err.code === "OUTCOME_UNKNOWN") {
            throw new GatewayError("CONNECTION_LOST", `the batch's connection was lost before COMMIT; nothing was applied (${err.message})`, {
              cause: err,
            });
          }
          throw err;
        }
      }, runAs, route.deadline);
    });
  }

  /** Where a statement would go by its text: read or write (the metrics label requests with it). */
  intentOf(sql: string): Intent {
    return this.reader.analyse(sql).intent;
  }

  private retrying<T>(settings: RetrySettings, route: RouteRequest, unit: (attempt: number) => Promise<T>): Promise<Attempted<T>> {
    return runWithRetry(settings, route.deadline, this.clock, unit, (code) => this.onRetry?.(code));
  }

  /** The request's options for one attempt, once it has its connection: its statements get what is left of its timeout. */
  private within(options: ExecuteOptions, route: RouteRequest): ExecuteOptions {
    const remainingMs = Math.ceil(route.deadline - this.clock.now());
    return remainingMs >= options.timeoutMs ? options : { ...options, timeoutMs: Math.max(1, remainingMs) };
  }

  /** Read-only principals may send only what the reader knows to read; the rest is refused before anything runs. */
  refuseForReadOnly(sqls: readonly string[]): void {
    for (const [at, sql] of sqls.entries()) {
      const reason = this.reader.analyse(sql).readOnlyRefusal;
      if (reason === undefined) continue;
      throw new GatewayError("FORBIDDEN", `this principal may only read: ${reason} are refused`, {
        issues: [{ path: sqls.length > 1 ? `statements.${at}.sql` : "sql", message: "not allowed for a read-only principal" }],
      });
    }
  }

  /**
   * Gateway-managed transactions and batches own BEGIN/COMMIT: SQL that begins or ends a transaction
   * itself — or, on MySQL, commits implicitly (DDL, LOCK TABLES...) — is refused there.
   */
  refuseTransactionControl(sqls: readonly string[], where: string, implicitCommits: "allow" | "refuse" = "refuse"): void {
    const refused = (sql: string) => {
      const analysis = this.reader.analyse(sql);
      return implicitCommits === "allow" ? analysis.transactionControl : analysis.endsTransaction;
    };
    const at = sqls.findIndex(refused);
    if (at < 0) return;
    const path = where === "a batch" ? `statements.${at}.sql` : "sql";
    const analysis = this.reader.analyse(sqls[at] as string);
    if (!analysis.understood) {
      throw new GatewayError("INVALID_REQUEST", `the gateway cannot read this statement (${analysis.readOnlyRefusal ?? "syntax"}), so it is not run in ${where}`, {
        issues: [{ path, message: "cannot be read" }],
      });
    }
    throw new GatewayError(
      "INVALID_REQUEST",
      `transaction control (BEGIN, COMMIT, ROLLBACK, XA, SET autocommit...) or a statement that commits implicitly (MySQL DDL, LOCK TABLES...) is not allowed in ${where}; the gateway begins and ends it, so run such SQL on its own`,
      { issues: [{ path, message: "begins or ends the transaction" }] },
    );
  }

  /** Where a request may run, given its intent and freshness options; invalid tokens are refused. */
  route(intent: Intent, request: { consistencyToken?: string | undefined; maxStalenessMs?: number | undefined }, timeoutMs: number): RouteRequest {
    if (request.consistencyToken !== undefined && !this.router.isPosition(request.consistencyToken)) {
      throw new GatewayError("INVALID_REQUEST", "consistencyToken is not a token this gateway issued", {
        issues: [{ path: "consistencyToken", message: "not a token this gateway issued" }],
      });
    }
    return { intent, consistencyToken: request.consistencyToken, maxStalenessMs: request.maxStalenessMs, deadline: this.clock.now() + timeoutMs };
  }

  private endpointFor(route: RouteRequest, policy: ExecutionPolicy): Promise<Endpoint> {
    return policy.primaryOnly ? this.router.primary(route.deadline) : this.router.endpointFor(route);
  }

  /**
   * Borrows a connection of the endpoint for the work and reports failover signs on the way out.
   * `deadline` (clock ms) bounds the wait for a connection.
   */
  async onEndpoint<T>(
    endpoint: Endpoint,
    intent: Intent,
    work: (connection: EngineConnection) => Promise<T>,
    runAs: RunAs = UNRESTRICTED,
    deadline?: number,
  ): Promise<T> {
    // What the endpoint was when the work was sent there, not when an error comes back.
    const onReplica = endpoint.role === "replica";
    endpoint.outstanding++;
    const pool = this.pools.get(endpoint, runAs.login);
    const entry = await this.acquireOn(pool, endpoint, intent, onReplica, runAs, deadline).catch((err: unknown) => {
      endpoint.outstanding--;
      throw err;
    });
    try {
      return await work(entry.connection);
    } catch (err) {
      if (isReadOnlyRefusal(err) && !onReplica) {
        // The session's own READ ONLY (SET TRANSACTION READ ONLY, default_transaction_read_only) is the
        // caller's business; only an instance that is really read-only now is a failover sign.
        if (!(await instanceIsReadOnly(entry.connection, this.config.topology.checkTimeoutMs, true))) throw err;
        // A session that refused a write on a demoted instance: never reuse it.
        entry.retireOnRelease = "refused a write as read-only";
      }
      throw this.failoverAware(err, endpoint, intent, onReplica);
    } finally {
      endpoint.outstanding--;
      pool.release(entry);
    }
  }

  /**
   * A connection where the route leads, for work the caller drives itself (an interactive
   * transaction's BEGIN): followed to the new primary if a failover moves it while the caller waits,
   * within the route's deadline.
   */
  async borrow(route: RouteRequest, runAs: RunAs): Promise<{ endpoint: Endpoint; pool: Pool; entry: PoolEntry }> {
    const { value } = await this.retrying(this.config.retry, route, async () => {
      const endpoint = await this.router.endpointFor(route);
      const onReplica = endpoint.role === "replica";
      const pool = this.pools.get(endpoint, runAs.login);
      return { endpoint, pool, entry: await this.acquireOn(pool, endpoint, route.intent, onReplica, runAs, route.deadline) };
    });
    return value;
  }

  /**
   * A connection of the endpoint. Work for the primary holds the primary's lease: if the endpoint
   * stops being the primary while the caller waits (a failover began, or was over before the caller
   * queued), the wait ends at once with PRIMARY_UNAVAILABLE, which the executor retries where the
   * primary now is. A connection that could not be had where the topology no longer points is sought
   * where it points now, in the same way; one that could not be had where it still points is the
   * caller's answer (another wait in the same queue, behind later callers, would not be fairer).
   */
  private acquireOn(pool: Pool, endpoint: Endpoint, intent: Intent, onReplica: boolean, runAs: RunAs, deadline?: number): Promise<PoolEntry> {
    const lease = onReplica ? undefined : this.topology.primaryLease(endpoint);
    return pool.acquire({ tenant: runAs.tenant, share: runAs.share }, { deadline, signal: lease }).catch((err: unknown) => {
      // Where the topology pointed when the wait ended, before this failure's own failover sign: an
      // endpoint the monitor still trusted (a login refused, a full server) is the caller's answer,
      // not a reason to wait again.
      const stillRight = onReplica ? endpoint.servesReads : this.topology.primary() === endpoint;
      const failure = this.failoverAware(err, endpoint, intent, onReplica);
      throw stillRight ? failure : this.movedOn(failure, endpoint, onReplica);
    });
  }

  /** DATABASE_UNAVAILABLE or POOL_TIMEOUT from an endpoint that no longer served the work: run it where the topology points now. */
  private movedOn(err: unknown, endpoint: Endpoint, onReplica: boolean): unknown {
    if (!(err instanceof GatewayError) || (err.code !== "DATABASE_UNAVAILABLE" && err.code !== "POOL_TIMEOUT")) return err;
    const why = onReplica ? `${endpoint.name} no longer serves reads` : `${endpoint.name} is no longer the primary`;
    return new GatewayError(onReplica ? "CONNECTION_LOST" : "PRIMARY_UNAVAILABLE", `${why}; nothing was sent there (${err.message})`, { cause: err, pool: err.pool });
  }

  /**
   * The consistency token after a write. The write is already applied: failing to read the position
   * (a lost session, an engine without it) must not turn it into an error the caller might retry.
   */
  private async tokenAfter(intent: Intent, connection: EngineConnection, timeoutMs: number): Promise<string | undefined> {
    if (intent !== "write") return undefined;
    return (await connection.commitPosition(timeoutMs).catch(() => null)) ?? undefined;
  }

  /**
   * A write refused as read-only, or a primary that cannot be reached or dropped the session, means a
   * failover may be under way: the topology looks again at once. A refused write was not applied, so
   * it is retried once a primary is found; a read that lost its session on a replica is run elsewhere.
   */
  private failoverAware(err: unknown, endpoint: Endpoint, intent: Intent, onReplica: boolean): unknown {
    if (!(err instanceof GatewayError)) return err;
    const onPrimary = !onReplica;
    if (isReadOnlyRefusal(err) && intent === "write") {
      this.topology.signalFailover(`write refused as read-only by ${endpoint.name}`, endpoint);
      return new GatewayError("PRIMARY_UNAVAILABLE", `${endpoint.name} is read-only (failover); the write was not applied`, { cause: err });
    }
    if (err.code === "OUTCOME_UNKNOWN" || err.code === "DATABASE_UNAVAILABLE" || err.code === "CONNECTION_LOST") {
      if (onPrimary) this.topology.signalFailover(`${endpoint.name}: ${err.message}`, endpoint);
      // Only on a replica is a lost read certainly harmless: nothing there can write.
      if (intent === "read" && !onPrimary && err.code !== "CONNECTION_LOST") {
        return new GatewayError("CONNECTION_LOST", `${endpoint.name} was lost during a read; it is run again elsewhere (${err.message})`, { cause: err });
      }
    }
    return err;
  }
}
