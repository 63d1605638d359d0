/**
 * One path for a statement, from either surface: plan it (plan.ts: every per-request decision, made
 * once), then run it — outside transactions through the executor (leased where the route leads,
 * retried as a whole), or on an interactive transaction's own session. Routes and the Data API hand
 * in plain requests and read plain answers; they never touch a session.
 */
import type { ResultCache } from "../cache/result-cache.js";
import type { Clock } from "../clock.js";
import type { RowCursor, StatementResult } from "../engines/engine.js";
import { GatewayError } from "../errors.js";
import type { ClusterEvents } from "../events.js";
import { endingCursor } from "./ending-cursor.js";
import { isDatabaseRefusal } from "./failure.js";
import type { Executor, Written } from "./executor.js";
import type { Plan, Planner, SurfacePolicy, WorkRequest } from "./plan.js";
import type { Attempted } from "./retry.js";
import type { RunAs } from "./run-as.js";
import type { OpenedStream, StreamRunner } from "./streams.js";
import type { TransactionRegistry, TurnOptions } from "./transactions.js";

export class StatementPipeline {
  constructor(
    private readonly planner: Planner,
    private readonly executor: Executor,
    /** Interactive transactions: begun, committed and rolled back here; their statements run through `run`. */
    readonly transactions: TransactionRegistry,
    private readonly streams: StreamRunner,
    /** Invalidates what work wrote before it is answered (gateway/cache/). */
    private readonly cache: ResultCache,
    /** Where answered work is told while query insights are on (plans then carry their timing). */
    private readonly events: ClusterEvents,
    private readonly clock: Clock,
  ) {}

  plan(request: WorkRequest, surface: SurfacePolicy, runAs: RunAs): Plan {
    return this.planner.plan(request, surface, runAs);
  }

  /**
   * Opens a plan of one autocommit statement as a stream (streams.ts): resolves once its columns and
   * first rows are in; the caller pulls the rest and must end it with `next` to the end or `close`.
   */
  stream(plan: Plan): Promise<OpenedStream> {
    const opened = this.cachedStream(plan);
    return plan.timing === undefined ? opened : this.toldStream(plan, opened);
  }

  private cachedStream(plan: Plan): Promise<OpenedStream> {
    const opened = this.streams.open(plan);
    if (!this.cache.invalidates(plan.statements, commitsNothing(plan))) return opened;
    // A stream's write commits as it ends: the cache is told when the cursor ends (or fails to open), before the answer ends.
    const told = <T>(work: Promise<T>): Promise<T> => this.cache.afterWrite(work, plan.statements, false);
    return opened.then(
      ({ cursor, attempts }) => ({ cursor: endingCursor(cursor, () => told(cursor.close()), (err) => err), attempts }),
      (err: unknown) => told(Promise.reject(err as Error)),
    );
  }

  /**
   * Runs a plan: on the transaction `transactionId` when given (its turn queued behind a running
   * statement with `turn.queue`), else on its own. Interactive transactions answer no consistency token
   * until their COMMIT, and are never retried.
   */
  run(plan: Plan, transactionId?: string, turn: TurnOptions = {}): Promise<Attempted<Written<StatementResult[]>>> {
    const answer = this.answer(plan, transactionId, turn);
    return plan.timing === undefined ? answer : this.told(plan, answer);
  }

  private answer(plan: Plan, transactionId: string | undefined, turn: TurnOptions): Promise<Attempted<Written<StatementResult[]>>> {
    // Not async: the executor's own promise is the answer, with no extra turn on the hot path (a read's
    // afterWrite is its work itself).
    if (transactionId === undefined) return this.cache.afterWrite(this.executor.run(plan), plan.statements, commitsNothing(plan));
    // In a transaction only statements that commit on their own (MySQL DDL, where allowed) are written before the COMMIT.
    const committing = plan.statements.filter(({ analysis }) => analysis.endsTransaction);
    const work = this.transactions.run(transactionId, plan, turn).then((value) => ({ value: { value, consistencyToken: undefined }, attempts: 1 }));
    return committing.length === 0 ? work : this.cache.afterWrite(work, committing, false);
  }

  /** Query insights are on: the work is told to the hub when it is answered, failed or not. */
  private told(plan: Plan, answer: Promise<Attempted<Written<StatementResult[]>>>): Promise<Attempted<Written<StatementResult[]>>> {
    return answer.then(
      (answered) => {
        this.tell(plan, rowsOf(answered.value.value), undefined);
        return answered;
      },
      (err: unknown) => {
        this.tell(plan, 0, failureCode(err));
        throw err;
      },
    );
  }

  /**
   * Query insights are on: a stream is told once, when it ends (its last batch, a failure, or the
   * caller's close), with the rows handed on; one that failed to open, at once.
   */
  private toldStream(plan: Plan, opened: Promise<OpenedStream>): Promise<OpenedStream> {
    return opened.then(
      ({ cursor, attempts }) => {
        let rows = 0;
        let told = false;
        const tell = (error: string | undefined): void => {
          if (told) return;
          told = true;
          this.tell(plan, rows, error);
        };
        const counted: RowCursor = {
          columns: cursor.columns,
          get summary() {
            return cursor.summary;
          },
          next: () =>
            cursor.next().then(
              (batch) => {
                rows += batch.length;
                if (batch.length === 0) tell(undefined);
                return batch;
              },
              (err: unknown) => {
                tell(failureCode(err));
                throw err;
              },
            ),
          close: () => cursor.close().then(() => tell(undefined)),
        };
        return { cursor: counted, attempts };
      },
      (err: unknown) => {
        this.tell(plan, 0, failureCode(err));
        throw err;
      },
    );
  }

  private tell(plan: Plan, rows: number, error: string | undefined): void {
    const timing = plan.timing as NonNullable<Plan["timing"]>;
    this.events.emit("workRun", {
      principal: plan.runAs.tenant,
      statements: plan.statements.map(({ sql }) => sql),
      totalMs: this.clock.now() - timing.startedAt,
      databaseMs: timing.databaseMs,
      rows,
      error,
    });
  }
}

/** Rows a statement returned, or else changed (rowCount). */
function rowsOf(results: readonly StatementResult[]): number {
  let rows = 0;
  for (const result of results) rows += result.rows.length > 0 ? result.rows.length : (result.rowCount ?? 0);
  return rows;
}

/** How insights name a failure: its registry code, with the database's SQLSTATE (or engine code) for a database error. */
export function failureCode(err: unknown): string {
  if (!(err instanceof GatewayError)) return "INTERNAL_ERROR";
  const database = err.database?.sqlstate ?? err.database?.engineCode;
  return isDatabaseRefusal(err) && database !== undefined ? `${err.code}/${database}` : err.code;
}

/** Work that cannot have written: a read-only principal's, or a READ ONLY batch. */
function commitsNothing(plan: Plan): boolean {
  return plan.runAs.readOnly || (plan.scope === "batch" && plan.readOnly);
}
