/**
 * Runs a plan outside interactive transactions: one autocommit statement, or an atomic batch (BEGIN;
 * statements; COMMIT on one session), leased where the plan's route leads. Both are retried as a
 * whole, until the request's deadline, when the database rolled them back for a conflict, when the
 * session was lost before anything was committed, when a demoted primary refused a write, or when no
 * session could be had where the topology no longer points; writes answer with a consistency token.
 * A read-only principal's work runs in a READ ONLY transaction that ends in ROLLBACK.
 */
import type { Param } from "../../schemas/query.js";
import type { EngineConnection, ExecuteOptions, StatementResult, TransactionOptions } from "../engines/engine.js";
import { GatewayError } from "../errors.js";
import type { Clock } from "../clock.js";
import type { KeyedWork, RecordedAnswer } from "../idempotency/keyed-work.js";
import { runOnce } from "../idempotency/run-once.js";
import type { IdempotencyStore } from "../idempotency/store.js";
import type { RouteRequest } from "../routing/router.js";
import type { Endpoint } from "../topology/endpoint.js";
import { keyedFailure, outcomeOf, outcomeUnknown, unitFailure } from "./failure.js";
import type { Leases } from "./leases.js";
import type { Plan, PlannedStatement } from "./plan.js";
import type { Attempted } from "./retry.js";

export interface Written<T> {
  value: T;
  /** Set after a write: where a replica must have replayed to show it. */
  consistencyToken: string | undefined;
  /** A keyed write's answer as recorded with its key: the surface sends it as it is. */
  recorded?: RecordedAnswer | undefined;
}

/**
 * A read-only principal's statements: on its read-only login where one is configured, in a READ ONLY
 * transaction (on MySQL the session's default access mode too), one statement per string, ending in
 * ROLLBACK so that nothing it did can persist even if a write got past READ ONLY. A statement that
 * ended the transaction is an error. Nothing commits, so a session lost on the way is safe to run again.
 */
async function readOnlyUnit(
  connection: EngineConnection,
  statements: readonly { sql: string; params: readonly Param[] }[],
  options: ExecuteOptions,
  transaction: Pick<TransactionOptions, "isolation" | "deferrable">,
): Promise<StatementResult[]> {
  try {
    await connection.begin({ isolation: transaction.isolation, deferrable: transaction.deferrable, readOnly: true, lockReadOnly: true }, options.timeoutMs);
    const results: StatementResult[] = [];
    for (const statement of statements) {
      results.push(await connection.execute(statement.sql, statement.params, options));
      if (!connection.inTransaction) throw new GatewayError("FORBIDDEN", "this principal may only read: the statement ended the read-only transaction");
    }
    return results;
  } catch (err) {
    throw unitFailure(err, "read only");
  } finally {
    if (connection.alive) await connection.rollback(options.timeoutMs).catch(() => undefined);
  }
}

/** One statement's answer, with its commit position (if any) as the consistency token. */
function writtenOne(value: StatementResult): Written<StatementResult[]> {
  return { value: [value], consistencyToken: value.commitPosition };
}

/** The plan's options for one attempt, once it has its session: its statements get what is left of its timeout. */
function within(options: ExecuteOptions, route: RouteRequest, clock: Clock): ExecuteOptions {
  const remainingMs = Math.ceil(route.deadline - clock.now());
  return remainingMs >= options.timeoutMs ? options : Object.assign({}, options, { timeoutMs: Math.max(1, remainingMs) });
}

export class Executor {
  constructor(
    private readonly leases: Leases,
    private readonly clock: Clock,
    /** The cluster's idempotency record, for keyed writes. */
    private readonly keys: IdempotencyStore,
  ) {}

  /** Runs an autocommit plan (a statement, or a batch) to its answer. */
  run(plan: Plan): Promise<Attempted<Written<StatementResult[]>>> {
    if (plan.runAs.readOnly) return this.readOnly(plan);
    if (plan.keyed !== undefined) return this.keyed(plan, plan.keyed);
    return plan.scope === "batch" ? this.batch(plan) : this.statement(plan);
  }

  private readOnly(plan: Plan): Promise<Attempted<Written<StatementResult[]>>> {
    return this.leases.retrying(plan.retry, plan.route, async () => {
      const endpoint = this.leases.endpointNow(plan.route, plan.primaryOnly) ?? (await this.leases.endpointFor(plan.route, plan.primaryOnly));
      const value = await this.leases.run(endpoint, plan.intent, plan.runAs, plan.route.deadline, (connection) =>
        readOnlyUnit(connection, plan.statements, within(plan.options, plan.route, this.clock), plan),
        plan.timing,
      );
      return { value, consistencyToken: undefined };
    });
  }

  private statement(plan: Plan): Promise<Attempted<Written<StatementResult[]>>> {
    const [statement] = plan.statements as [Plan["statements"][number]];
    let route = plan.route;
    const run = (target: Endpoint): Promise<StatementResult> =>
      this.leases.run(
        target,
        route.intent,
        plan.runAs,
        route.deadline,
        (connection) => {
          const options = within(plan.options, route, this.clock);
          const wantsToken = plan.withToken && route.intent === "write";
          // A read (no token to read) whose failure needs no rewording is the engine's own promise: no turn of its own.
          if (!wantsToken && !plan.commitsInParts) return connection.execute(statement.sql, statement.params, options);
          return this.statementWithToken(plan, route, connection, statement, options, wantsToken);
        },
        plan.timing,
        plan.knownReadOnly,
      );
    const runOn = (endpoint: Endpoint): Promise<Written<StatementResult[]>> =>
      run(endpoint).then(writtenOne, (err: unknown) => {
        // A "read" that wrote after all (a user function not in routing.writingFunctions): a replica
        // refused it, so nothing was applied; it runs on the primary, as a write.
        if (!outcomeOf(err, { unit: "statement", intent: route.intent, endpoint: endpoint.name, onReplica: endpoint.role === "replica" }).runAsWrite) throw err;
        route = Object.assign({}, route, { intent: "write" as const });
        return this.leases.endpointFor(route, plan.primaryOnly).then(run).then(writtenOne);
      });
    // Not async: where the route needs no wait, an attempt is the lease's promise and one step more.
    return this.leases.retrying(plan.retry, route, () => {
      const endpoint = this.leases.endpointNow(route, plan.primaryOnly);
      return endpoint !== undefined ? runOn(endpoint) : this.leases.endpointFor(route, plan.primaryOnly).then(runOn);
    });
  }

  /**
   * One statement of `plan` on its session, with (when `wantsToken`) the write's consistency token as
   * its commitPosition: the engine's, read with the statement where it can, else read after it on the
   * same session. A failure of SQL that commits in parts says that some of it may have committed.
   */
  private async statementWithToken(
    plan: Plan,
    route: RouteRequest,
    connection: EngineConnection,
    statement: PlannedStatement,
    options: ExecuteOptions,
    wantsToken: boolean,
  ): Promise<StatementResult> {
    let value: StatementResult;
    try {
      value = await connection.execute(statement.sql, statement.params, wantsToken ? Object.assign({}, options, { withCommitPosition: true }) : options);
    } catch (err) {
      throw plan.commitsInParts ? unitFailure(err, "statement in parts") : err;
    }
    if (wantsToken && value.commitPosition === undefined) {
      const token = await this.tokenAfter(plan, route, connection);
      if (token !== undefined) value.commitPosition = token;
    }
    return value;
  }

  private batch(plan: Plan): Promise<Attempted<Written<StatementResult[]>>> {
    // Where the last attempt lost its session: the same statement losing it on the same endpoint
    // again (which the topology still trusts) is the batch's own SQL ending its session
    // (pg_terminate_backend(pg_backend_pid())), not a failover: it is answered, not run again.
    let lost: { endpoint: Endpoint; at: number } | undefined;
    return this.leases.retrying(plan.retry, plan.route, async () => {
      const endpoint = this.leases.endpointNow(plan.route, plan.primaryOnly) ?? (await this.leases.endpointFor(plan.route, plan.primaryOnly));
      return this.leases.run(endpoint, plan.intent, plan.runAs, plan.route.deadline, async (connection) => {
        const options = within(plan.options, plan.route, this.clock);
        let committing = false;
        /** The statement running (-1: BEGIN). */
        let at = -1;
        try {
          await connection.begin({ isolation: plan.isolation, readOnly: plan.readOnly, deferrable: plan.deferrable }, options.timeoutMs);
          const results: StatementResult[] = [];
          for (const statement of plan.statements) {
            at = results.length;
            results.push(await connection.execute(statement.sql, statement.params, options));
          }
          committing = true;
          const wantsToken = plan.withToken && plan.route.intent === "write";
          const { ended, position } = wantsToken ? await connection.commitWithPosition(options.timeoutMs) : { ended: await connection.commit(options.timeoutMs), position: null };
          if (ended === "rolled back") throw new GatewayError("TRANSACTION_ABORTED", "the database rolled the batch back at COMMIT");
          return { value: results, consistencyToken: position ?? undefined };
        } catch (err) {
          // Before COMMIT was sent, a lost session means the transaction rolled back: safe to run again.
          if (committing || !outcomeUnknown(err)) throw err;
          const again = at >= 0 && lost?.endpoint === endpoint && lost.at === at;
          lost = { endpoint, at };
          if (again) {
            throw new GatewayError(
              "DATABASE_ERROR",
              `statements.${at} ended its own session on ${endpoint.name}, which still answers (twice in a row: ${(err as Error).message}); the batch was rolled back, nothing was applied, and it is not run again`,
              { cause: err },
            );
          }
          throw unitFailure(err, "batch");
        }
      }, plan.timing);
    });
  }

  /**
   * A keyed write (a statement or a batch), exactly once: in a transaction that claims its key and
   * records its answer (idempotency/run-once.ts), retried as a whole, an unknown outcome included;
   * a replay answers what was recorded. Once an attempt's COMMIT went unanswered, a later failure is
   * still an unknown outcome: that COMMIT may yet have landed, and the same key settles it.
   */
  private async keyed(plan: Plan, work: KeyedWork): Promise<Attempted<Written<StatementResult[]>>> {
    let unknownOutcome = false;
    try {
      return await this.leases.retrying(plan.retry, plan.route, async () => {
        await this.keys.ensureTable(plan.options.timeoutMs);
        const endpoint = this.leases.endpointNow(plan.route, plan.primaryOnly) ?? (await this.leases.endpointFor(plan.route, plan.primaryOnly));
        return this.leases.run(endpoint, "write", plan.runAs, plan.route.deadline, async (connection) => {
          const options = within(plan.options, plan.route, this.clock);
          // The token of a write that ran now comes with its COMMIT; a replay's is read now.
          const withPosition = plan.withToken ? Object.assign({}, options, { withCommitPosition: true }) : options;
          const outcome = await runOnce(connection, this.keys, work, plan.statements, { isolation: plan.isolation, deferrable: plan.deferrable }, withPosition).catch((err: unknown) => {
            if (outcomeUnknown(err)) unknownOutcome = true;
            throw err;
          });
          const consistencyToken = outcome.position === undefined ? await this.tokenAfter(plan, plan.route, connection) : (outcome.position ?? undefined);
          return { value: outcome.results, consistencyToken, recorded: outcome.recorded };
        }, plan.timing);
      });
    } catch (err) {
      throw keyedFailure(err, unknownOutcome);
    }
  }

  /**
   * The consistency token after a write. The write is already applied: failing to read the position
   * (a lost session, an engine without it) must not turn it into an error the caller might retry.
   */
  private async tokenAfter(plan: Plan, route: RouteRequest, connection: EngineConnection): Promise<string | undefined> {
    if (!plan.withToken || route.intent !== "write") return undefined;
    return (await connection.commitPosition(plan.options.timeoutMs).catch(() => null)) ?? undefined;
  }
}
