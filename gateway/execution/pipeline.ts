/**
 * One path for a statement, from either surface: plan it (plan.ts: every per-request decision, made
 * once), then run it — outside transactions through the executor (leased where the route leads,
 * retried as a whole), or on an interactive transaction's own session. Routes and the Data API hand
 * in plain requests and read plain answers; they never touch a session.
 */
import type { StatementResult } from "../engines/engine.js";
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
  ) {}

  plan(request: WorkRequest, surface: SurfacePolicy, runAs: RunAs): Plan {
    return this.planner.plan(request, surface, runAs);
  }

  /**
   * Opens a plan of one autocommit statement as a stream (streams.ts): resolves once its columns and
   * first rows are in; the caller pulls the rest and must end it with `next` to the end or `close`.
   */
  stream(plan: Plan): Promise<OpenedStream> {
    return this.streams.open(plan);
  }

  /**
   * Runs a plan: on the transaction `transactionId` when given (its turn queued behind a running
   * statement with `turn.queue`), else on its own. Interactive transactions answer no consistency token
   * until their COMMIT, and are never retried.
   */
  run(plan: Plan, transactionId?: string, turn: TurnOptions = {}): Promise<Attempted<Written<StatementResult[]>>> {
    // Not async: the executor's own promise is the answer, with no extra turn on the hot path.
    if (transactionId === undefined) return this.executor.run(plan);
    return this.transactions.run(transactionId, plan, turn).then((value) => ({ value: { value, consistencyToken: undefined }, attempts: 1 }));
  }
}
