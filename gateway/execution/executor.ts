/**
 * Runs a plan outside interactive transactions: one autocommit statement, or an atomic batch (BEGIN;
 * statements; COMMIT on one session), leased where the plan's route leads. Both are retried as a
 * whole, until the request's deadline, when the database rolled them back for a conflict, when the
 * session was lost before anything was committed, when a demoted primary refused a write, or when no
 * session could be had where the topology no longer points; writes answer with a consistency token.
 * A read-only principal's work runs in a READ ONLY transaction that ends in ROLLBACK.
 */
import type { EngineConnection, ExecuteOptions, StatementResult, TransactionOptions } from "../engines/engine.js";
import { withCommitPosition } from "../engines/engine-statement.js";
import { GatewayError } from "../errors.js";
import type { KeyedWork, RecordedAnswer } from "../idempotency/keyed-work.js";
import { runOnce } from "../idempotency/run-once.js";
import type { IdempotencyStore } from "../idempotency/store.js";
import type { Endpoint } from "../topology/endpoint.js";
import type { AttemptState, Attempts, Body } from "./attempt.js";
import { keyedFailure, outcomeUnknown, unitFailure } from "./failure.js";
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
  statements: readonly PlannedStatement[],
  options: ExecuteOptions,
  transaction: Pick<TransactionOptions, "isolation" | "deferrable">,
): Promise<StatementResult[]> {
  try {
    await connection.begin({ isolation: transaction.isolation, deferrable: transaction.deferrable, readOnly: true, lockReadOnly: true }, options.timeoutMs);
    const results: StatementResult[] = [];
    for (const statement of statements) {
      results.push(await connection.execute(statement, options));
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

export class Executor {
  constructor(
    private readonly attempts: Attempts,
    /** The cluster's idempotency record, for keyed writes. */
    private readonly keys: IdempotencyStore,
  ) {}

  /** Runs an autocommit plan (a statement, or a batch) to its answer: the variant's body, in the one attempt (attempt.ts). */
  run(plan: Plan): Promise<Attempted<Written<StatementResult[]>>> {
    if (plan.runAs.readOnly) return this.attempts.run(plan, readOnlyBody);
    if (plan.keyed !== undefined) return this.keyed(plan, plan.keyed);
    return plan.scope === "batch" ? this.attempts.run(plan, batchBody()) : this.attempts.run(plan, this.statementBody);
  }

  /**
   * One statement. A read (no token to read) whose failure needs no rewording is the engine's own
   * promise and one step: no turn of its own. A method, not a closure per request.
   */
  private readonly statementBody = (connection: EngineConnection, options: ExecuteOptions, attempt: AttemptState<Written<StatementResult[]>>): Promise<Written<StatementResult[]>> => {
    const { plan, route } = attempt;
    const statement = plan.statements[0] as PlannedStatement;
    const wantsToken = plan.withToken && route.intent === "write";
    if (!wantsToken && !plan.commitsInParts) return connection.execute(statement, options).then(writtenOne);
    return this.statementWithToken(plan, connection, statement, options, wantsToken).then(writtenOne);
  };

  /**
   * One statement of `plan` on its session, with (when `wantsToken`) the write's consistency token as
   * its commitPosition: the engine's, read with the statement where it can, else read after it on the
   * same session. A failure of SQL that commits in parts says that some of it may have committed.
   */
  private async statementWithToken(plan: Plan, connection: EngineConnection, statement: PlannedStatement, options: ExecuteOptions, wantsToken: boolean): Promise<StatementResult> {
    let value: StatementResult;
    try {
      value = await connection.execute(wantsToken ? withCommitPosition(statement) : statement, options);
    } catch (err) {
      throw plan.commitsInParts ? unitFailure(err, "statement in parts") : err;
    }
    if (wantsToken && value.commitPosition === undefined) {
      const token = await tokenAfter(plan, connection);
      if (token !== undefined) value.commitPosition = token;
    }
    return value;
  }

  /**
   * A keyed write (a statement or a batch), exactly once: in a transaction that claims its key and
   * records its answer (idempotency/run-once.ts), retried as a whole, an unknown outcome included;
   * a replay answers what was recorded. Once an attempt's COMMIT went unanswered, a later failure is
   * still an unknown outcome: that COMMIT may yet have landed, and the same key settles it.
   */
  private async keyed(plan: Plan, work: KeyedWork): Promise<Attempted<Written<StatementResult[]>>> {
    let unknownOutcome = false;
    const body = async (connection: EngineConnection, options: ExecuteOptions): Promise<Written<StatementResult[]>> => {
      // The token of a write that ran now comes with its COMMIT; a replay's is read now.
      const outcome = await runOnce(connection, this.keys, work, plan.statements, { isolation: plan.isolation, deferrable: plan.deferrable }, options, plan.withToken).catch((err: unknown) => {
        if (outcomeUnknown(err)) unknownOutcome = true;
        throw err;
      });
      const consistencyToken = outcome.position === undefined ? await tokenAfter(plan, connection) : (outcome.position ?? undefined);
      return { value: outcome.results, consistencyToken, recorded: outcome.recorded };
    };
    try {
      return await this.attempts.run(plan, body, () => this.keys.ensureTable(plan.options.timeoutMs));
    } catch (err) {
      throw keyedFailure(err, unknownOutcome);
    }
  }
}

/** A read-only principal's work (readOnlyUnit), which commits nothing and answers no token. */
function readOnlyBody(connection: EngineConnection, options: ExecuteOptions, { plan }: AttemptState<Written<StatementResult[]>>): Promise<Written<StatementResult[]>> {
  return readOnlyUnit(connection, plan.statements, options, plan).then(unwritten);
}

function unwritten(value: StatementResult[]): Written<StatementResult[]> {
  return { value, consistencyToken: undefined };
}

/**
 * A batch: BEGIN, its statements, COMMIT on one session. Where the last attempt lost its session:
 * the same statement losing it on the same endpoint again (which the topology still trusts) is the
 * batch's own SQL ending its session (pg_terminate_backend(pg_backend_pid())), not a failover: it is
 * answered, not run again. A body per batch: it remembers that across its attempts.
 */
function batchBody(): Body<Written<StatementResult[]>> {
  let lost: { endpoint: Endpoint | undefined; at: number } | undefined;
  return async (connection, options, { plan, endpoint }) => {
    let committing = false;
    /** The statement running (-1: BEGIN). */
    let at = -1;
    try {
      await connection.begin({ isolation: plan.isolation, readOnly: plan.readOnly, deferrable: plan.deferrable }, options.timeoutMs);
      const results: StatementResult[] = [];
      for (const statement of plan.statements) {
        at = results.length;
        results.push(await connection.execute(statement, options));
      }
      committing = true;
      const wantsToken = plan.withToken && plan.route.intent === "write";
      const { ended, position } = wantsToken ? await connection.commitWithPosition(options.timeoutMs) : { ended: await connection.commit(options.timeoutMs), position: null };
      if (ended === "rolled back") throw new GatewayError("TRANSACTION_ABORTED", "the database rolled the batch back at COMMIT");
      return { value: results, consistencyToken: position ?? undefined };
    } catch (err) {
      // Before COMMIT was sent, a lost session means the transaction rolled back: safe to run again.
      if (committing || !outcomeUnknown(err)) throw err;
      const last = lost;
      const again = at >= 0 && last !== undefined && last.endpoint === endpoint && last.at === at;
      lost = { endpoint, at };
      if (again) {
        throw new GatewayError(
          "DATABASE_ERROR",
          `statements.${at} ended its own session on ${endpoint?.name ?? "its endpoint"}, which still answers (twice in a row: ${(err as Error).message}); the batch was rolled back, nothing was applied, and it is not run again`,
          { cause: err },
        );
      }
      throw unitFailure(err, "batch");
    }
  };
}

/**
 * The consistency token after a write. The write is already applied: failing to read the position
 * (a lost session, an engine without it) must not turn it into an error the caller might retry.
 */
async function tokenAfter(plan: Plan, connection: EngineConnection): Promise<string | undefined> {
  if (!plan.withToken) return undefined;
  return (await connection.commitPosition(plan.options.timeoutMs).catch(() => null)) ?? undefined;
}
