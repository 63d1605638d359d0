/**
 * What a failure means, decided once. Every registry code has a meaning of its own, with no context
 * (failure-meaning.ts, beside the error class: engines and the idempotency record, below execution,
 * read it too); an attempt adds its context (where the work was sent, what it was, how far it got)
 * and gets an Outcome here: the error the caller is answered with (its registry code), whether
 * anything was applied (no / maybe / yes), retry now / back off / never, and whether it is a sign of
 * failover. Retry, the attempt, interactive transactions and both surfaces read the answer here;
 * nowhere else compares error codes. A table test holds it (failure.test.ts).
 */
import type { ErrorCode } from "../../schemas/errors.js";
import type { Intent } from "../../schemas/query.js";
import { GatewayError } from "../errors.js";
import { isReadOnlyRefusal, type Meaning, meaningOf, type Retry } from "../failure-meaning.js";

export {
  type Applied,
  type FailureKind,
  isDatabaseRefusal,
  isReadOnlyRefusal,
  type Meaning,
  meaningOf,
  meaningOfCode,
  outcomeUnknown,
  type Retry,
  sessionLost,
  waitedOutForSession,
} from "../failure-meaning.js";
/**
 * How retry reads a failure: its code's advice, except that a keyed write's unknown outcome is run
 * again at once (the idempotency record decides: the key is found committed, or claimed and run once).
 */
export function retryOf(err: unknown, keyed: boolean): Retry {
  const meaning = meaningOf(err);
  if (keyed && meaning.kind === "lost" && meaning.applied === "maybe" && !(err as GatewayError).final) return "now";
  return meaning.retry;
}

/** The unit of work an attempt ran, which decides what a lost session or a conflict in it means. */
export type Unit =
  /** One autocommit statement: it committed as it ran, or not at all. */
  | "statement"
  /** SQL that carries its own transaction control (or several statements on MySQL): it commits in parts. */
  | "statement in parts"
  /** The gateway's BEGIN … COMMIT around a batch, before its COMMIT was sent: a lost session rolled it back. */
  | "batch"
  /** A read-only principal's work: in a READ ONLY transaction that ends in ROLLBACK, so nothing can have committed. */
  | "read only"
  /** A keyed write: the idempotency record settles an unknown outcome on the next attempt. */
  | "keyed"
  /** Waiting for a session: nothing was sent. */
  | "acquire"
  /** A stream whose rows may have been handed on: told to the topology, never reworded or run again. */
  | "open stream"
  /** A statement of an interactive transaction (the caller's): a lost session or a conflict ends it. */
  | "transaction"
  /** An interactive transaction's BEGIN: it applies nothing. */
  | "begin";

/** Where and how the failed work ran. */
export interface FailureContext {
  readonly unit: Unit;
  readonly intent: Intent;
  /** The endpoint's name, for messages. */
  readonly endpoint: string;
  /** The endpoint was a replica when the work was sent there (not when the error came back). */
  readonly onReplica: boolean;
  /** A read lost on it applied nothing and runs again: on a replica, or known to the engine's reader to change nothing. */
  readonly rerun?: boolean;
  /** A write refused as read-only on the primary: the instance, asked, confirmed it is read-only now (a demoted primary). */
  readonly instanceReadOnly?: boolean;
  /** Waiting for a session: the endpoint still serves the work (the topology points there). */
  readonly stillServes?: boolean;
  /** The interactive transaction's id, for messages. */
  readonly transaction?: string;
}

/** What a failure of an attempt means: the meaning of the error the caller gets, and whether the topology must look again. */
export interface Outcome extends Meaning {
  /** The error as the caller (and retry) is answered: the engine's, or reworded for the context. */
  readonly error: unknown;
  /** A sign that a failover may be under way: the topology looks again at once. */
  readonly failoverSign: boolean;
  /** A read a replica refused as a write (a user function that writes): nothing was applied; it runs on the primary, as a write. */
  readonly runAsWrite: boolean;
}

/** The outcome of a failed attempt, from the error its body answered with and the attempt's context. */
export function outcomeOf(err: unknown, context: FailureContext): Outcome {
  const failoverSign = isFailoverSign(err, context);
  const error = reworded(err, context);
  const meaning = meaningOf(error);
  const runAsWrite = context.intent === "read" && context.onReplica && isReadOnlyRefusal(error);
  return { code: meaning.code, kind: meaning.kind, applied: meaning.applied, retry: runAsWrite ? "now" : meaning.retry, error, failoverSign, runAsWrite };
}

/** Codes that say the primary may be gone: a session lost or none to be had. */
function primaryMayBeGone(code: ErrorCode): boolean {
  return code === "OUTCOME_UNKNOWN" || code === "CONNECTION_LOST" || code === "DATABASE_UNAVAILABLE";
}

function isFailoverSign(err: unknown, context: FailureContext): boolean {
  if (!(err instanceof GatewayError)) return false;
  if (context.unit === "transaction" || context.unit === "begin") {
    // The caller's transaction: a lost session on a read-write one, or a refusal the instance confirmed.
    if (context.intent === "read") return false;
    return err.code === "OUTCOME_UNKNOWN" || (err.refusedAsReadOnly && context.instanceReadOnly === true);
  }
  if (isReadOnlyRefusal(err)) return context.intent === "write" && (context.onReplica || context.instanceReadOnly === true);
  return !context.onReplica && primaryMayBeGone(err.code);
}

/** The error the caller gets: the engine's, reworded where the context says more about what was applied. */
function reworded(err: unknown, context: FailureContext): unknown {
  if (!(err instanceof GatewayError)) return err;
  const byUnit = rewordedForUnit(err, context);
  if (context.unit === "transaction" || context.unit === "begin" || context.unit === "open stream") return byUnit;
  return byUnit instanceof GatewayError ? rewordedForEndpoint(byUnit, context) : byUnit;
}

/**
 * The error a unit's own body answers with, before the lease classifies it (`outcomeOf`): what a
 * failure inside SQL that commits in parts, a read-only principal's work, a batch before its COMMIT, an
 * interactive transaction's BEGIN or statement means.
 */
export function unitFailure(err: unknown, unit: Unit, transaction = ""): unknown {
  return err instanceof GatewayError ? rewordedForUnit(err, { unit, transaction }) : err;
}

function rewordedForUnit(err: GatewayError, context: Pick<FailureContext, "unit" | "transaction">): unknown {
  switch (context.unit) {
    case "statement in parts":
      if (err.code !== "STATEMENT_TIMEOUT" && err.code !== "SERIALIZATION_FAILURE" && err.code !== "CONNECTION_LOST") return err;
      return new GatewayError("OUTCOME_UNKNOWN", `${err.message}; the SQL contains its own transaction control, so part of it may have been committed`, {
        cause: err,
        database: err.database,
      });
    case "read only":
      return readOnlyFailure(err);
    case "batch":
      // Before COMMIT was sent, a lost session means the transaction rolled back: safe to run again.
      if (err.code !== "OUTCOME_UNKNOWN") return err;
      return new GatewayError("CONNECTION_LOST", `the batch's connection was lost before COMMIT; nothing was applied (${err.message})`, { cause: err });
    case "begin":
      if (err.code !== "OUTCOME_UNKNOWN") return err;
      return new GatewayError("CONNECTION_LOST", `the connection was lost while beginning the transaction; nothing was applied`, { cause: err });
    case "transaction":
      return transactionFailure(err, context.transaction ?? "");
    default:
      return err;
  }
}

/**
 * A read-only principal's work: a session lost on the way committed nothing (it ends in ROLLBACK), and
 * a write the database refused (READ ONLY, or its login's grants) is a permission error.
 */
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

/** A statement of an interactive transaction failed: a conflict or a lost session ended the whole transaction. */
function transactionFailure(err: GatewayError, id: string): unknown {
  if (err.code === "SERIALIZATION_FAILURE") {
    // The conflict rolled the whole transaction back: retrying the statement cannot help, the
    // caller must roll back and run the transaction again.
    return new GatewayError("TRANSACTION_ABORTED", `${err.message}; the transaction was rolled back: roll it back and run it again from the start`, {
      cause: err,
      database: err.database,
    });
  }
  if (err.code === "OUTCOME_UNKNOWN" || err.code === "CONNECTION_LOST") {
    return new GatewayError("CONNECTION_LOST", `transaction ${id} lost its connection and was rolled back; nothing was committed: run the whole transaction again`, {
      cause: err,
    });
  }
  return err;
}

/**
 * A write refused as read-only by a demoted primary was not applied: it is retried once a primary is
 * found. A read that lost its session where that is harmless (`rerun`) is run again. A session that
 * could not be had where the topology no longer points is sought where it points now.
 */
function rewordedForEndpoint(err: GatewayError, context: FailureContext): GatewayError {
  const { endpoint, onReplica } = context;
  if (isReadOnlyRefusal(err) && context.intent === "write" && (onReplica || context.instanceReadOnly === true)) {
    return new GatewayError("PRIMARY_UNAVAILABLE", `${endpoint} is read-only (failover); the write was not applied`, { cause: err });
  }
  if (primaryMayBeGone(err.code) && context.intent === "read" && (context.rerun ?? onReplica) && err.code !== "CONNECTION_LOST") {
    // A lost read is certainly harmless on a replica (nothing there can write), and anywhere when
    // the engine's reader knows it changes nothing (a writer that died under a plain SELECT).
    err = new GatewayError("CONNECTION_LOST", `${endpoint} was lost during a read; it is run again (${err.message})`, { cause: err });
  }
  if (context.unit === "acquire" && context.stillServes === false && (err.code === "DATABASE_UNAVAILABLE" || err.code === "POOL_TIMEOUT")) {
    // Where the topology pointed when the wait ended: an endpoint it still trusted (a login refused,
    // a full server) is the caller's answer, not a reason to wait again.
    const why = onReplica ? `${endpoint} no longer serves reads` : `${endpoint} is no longer the primary`;
    return new GatewayError(onReplica ? "CONNECTION_LOST" : "PRIMARY_UNAVAILABLE", `${why}; nothing was sent there (${err.message})`, { cause: err, pool: err.pool });
  }
  return err;
}

/**
 * A keyed write's answer once its retries ended, when an earlier attempt's COMMIT went unanswered: that
 * COMMIT may yet have landed, so a later failure (but a refused key) is still an unknown outcome.
 */
export function keyedFailure(err: unknown, earlierUnknown: boolean): unknown {
  if (!earlierUnknown || !(err instanceof GatewayError) || err.code === "OUTCOME_UNKNOWN" || err.code === "IDEMPOTENCY_KEY_REUSED") return err;
  return new GatewayError("OUTCOME_UNKNOWN", `${err.message}; an earlier attempt's COMMIT went unanswered, so the write may have been applied: send it again with the same idempotency key to learn its answer`, {
    cause: err,
    attempts: err.attempts,
  });
}
