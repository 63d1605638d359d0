/**
 * What became of interactive transactions that are no longer open, so that a later call on one gets
 * a true answer — rolled back by the gateway and why, committed, or ended with an unknown outcome —
 * instead of "unknown, committed or rolled back". Bounded: the oldest are forgotten first (and then
 * answer TRANSACTION_NOT_FOUND like any unknown id). Only the principal that began a transaction is
 * told its fate; others are told it does not exist. A failed COMMIT is mapped here to what its caller
 * is told and what later calls are told.
 */
import type { ErrorCode } from "../../schemas/errors.js";
import { GatewayError } from "../errors.js";
import { isDatabaseRefusal, meaningOf } from "./failure.js";

/** How the fate of a transaction whose COMMIT went unanswered is worded (a keyed commit is settled from the record instead). */
export const UNKNOWN_OUTCOME = "COMMIT whose outcome is unknown";

/** How many ended transactions are remembered. */
const MEMORY = 10000;

interface Fate {
  code: ErrorCode;
  message: string;
  tenant: string;
}

export class EndedTransactions {
  private readonly fates = new Map<string, Fate>();

  has(id: string): boolean {
    return this.fates.has(id);
  }

  /** Remembers how transaction `id` of `tenant` ended: the error every later call on it gets. */
  remember(id: string, tenant: string, code: ErrorCode, message: string): void {
    if (this.fates.size >= MEMORY && !this.fates.has(id)) {
      const oldest = this.fates.keys().next().value;
      if (oldest !== undefined) this.fates.delete(oldest);
    }
    this.fates.set(id, { code, message, tenant });
  }

  /** The answer to a call on an ended transaction, if `tenant` began it and it is remembered. */
  answerFor(id: string, tenant: string): GatewayError | undefined {
    const fate = this.fates.get(id);
    if (fate === undefined || fate.tenant !== tenant) return undefined;
    return new GatewayError(fate.code, fate.message);
  }
}

/**
 * A COMMIT that failed: the caller's error and the transaction's fate. A session lost before COMMIT
 * was sent took the transaction with it (retrying the COMMIT cannot help, only running the whole
 * transaction again); one lost after leaves the outcome unknown.
 */
export function commitFailure(id: string, err: unknown): { error: unknown; fate: [ErrorCode, string] } {
  const meaning = meaningOf(err);
  if (!(err instanceof GatewayError)) return { error: err, fate: ["TRANSACTION_NOT_FOUND", `transaction ${id} ended with a failed COMMIT`] };
  if (meaning.kind === "lost" && meaning.applied === "no") {
    const message = `transaction ${id} lost its connection before COMMIT was sent, so the database rolled it back and nothing was committed: retrying the COMMIT cannot help, only running the whole transaction again`;
    return { error: new GatewayError("CONNECTION_LOST", message, { cause: err }), fate: ["TRANSACTION_ABORTED", `transaction ${id} was rolled back: it lost its connection before COMMIT; run it again from the start`] };
  }
  if (meaning.kind === "lost") {
    const message = `transaction ${id}: the connection was lost after COMMIT was sent; it may or may not have committed (${err.message})`;
    return { error: new GatewayError("OUTCOME_UNKNOWN", message, { cause: err }), fate: ["TRANSACTION_NOT_FOUND", `transaction ${id} ended with a ${UNKNOWN_OUTCOME} (the connection was lost after it was sent)`] };
  }
  const fate: [ErrorCode, string] = ["TRANSACTION_ABORTED", `transaction ${id} was rolled back by the database at COMMIT (${err.message}): run it again from the start`];
  if (meaning.kind === "conflict") {
    const message = `transaction ${id} conflicted at COMMIT and the database rolled it back (${err.message}): run it again from the start`;
    return { error: new GatewayError("TRANSACTION_ABORTED", message, { cause: err, database: err.database }), fate };
  }
  // A deferred constraint that fails at COMMIT rolls the transaction back; the caller sees the database's words.
  if (isDatabaseRefusal(err)) return { error: err, fate };
  return { error: err, fate: ["TRANSACTION_NOT_FOUND", `transaction ${id} ended with a failed COMMIT (${err.code})`] };
}
