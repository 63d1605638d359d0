/**
 * A keyed write, exactly once, on one session: BEGIN; claim the key (INSERT into the record, unique on
 * principal and key); run the statements; record the answer; COMMIT. The claim is what makes it once:
 * a concurrent call with the same key waits on the unique index until the first commits (then finds
 * the key and answers the recorded answer) or rolls back (then claims it and runs). A key found with
 * another request's fingerprint is refused; an expired one is deleted and claimed again.
 */
import type { EngineConnection, EngineStatement, ExecuteOptions, StatementResult, TransactionOptions } from "../engines/engine.js";
import { GatewayError } from "../errors.js";
import { outcomeUnknown } from "../failure-meaning.js";
import type { KeyedWork, RecordedAnswer } from "./keyed-work.js";
import { type IdempotencyStore, keyReused } from "./store.js";

export interface RunOnceOutcome {
  /** The statements' results when they ran now; empty when the answer is a replay. */
  results: StatementResult[];
  recorded: RecordedAnswer;
  /**
   * When it ran now and `withPosition` asked for it: the position after its COMMIT, read in
   * the COMMIT's round trip where the engine can (null when it could not be read). Undefined for a replay.
   */
  position?: string | null;
}

/** Claims tried before giving up: each further one follows a key that expired or a claim that rolled back meanwhile. */
const CLAIM_ROUNDS = 3;

export async function runOnce(
  connection: EngineConnection,
  store: IdempotencyStore,
  work: KeyedWork,
  statements: readonly EngineStatement[],
  begin: TransactionOptions,
  options: ExecuteOptions,
  /** Read the position after COMMIT in its round trip where the engine can (a write whose caller wants its token). */
  withPosition = false,
): Promise<RunOnceOutcome> {
  for (let round = 1; ; round++) {
    if (await claimKey(connection, store, work, begin, options)) return runClaimed(connection, store, work, statements, options, withPosition);
    const found = await store.find(connection, work, options.timeoutMs);
    if (found !== undefined) {
      if (found.fingerprint !== work.fingerprint) throw keyReused();
      // A committed claim always carries its answer; null would be a claim made outside the gateway.
      if (found.answer === null) throw new GatewayError("INTERNAL_ERROR", "an idempotency key was recorded without an answer");
      return { results: [], recorded: { answer: found.answer, replayed: true } };
    }
    if (round >= CLAIM_ROUNDS) {
      throw new GatewayError("SERIALIZATION_FAILURE", "the idempotency key was claimed and released repeatedly by concurrent requests; nothing was applied");
    }
  }
}

/** BEGIN and claim the key: true when claimed (the transaction stays open), false when it is taken (rolled back). */
export async function claimKey(connection: EngineConnection, store: IdempotencyStore, work: KeyedWork, begin: TransactionOptions, options: ExecuteOptions): Promise<boolean> {
  try {
    await connection.begin(begin, options.timeoutMs);
    await store.claim(connection, work, null, options.timeoutMs);
    return true;
  } catch (err) {
    if (connection.alive && connection.inTransaction) await connection.rollback(options.timeoutMs).catch(() => undefined);
    if (!store.isKeyTaken(err)) throw beforeCommit(err);
    return false;
  }
}

/** The claimed key's statements, its answer recorded, and COMMIT. */
async function runClaimed(
  connection: EngineConnection,
  store: IdempotencyStore,
  work: KeyedWork,
  statements: readonly EngineStatement[],
  options: ExecuteOptions,
  withPosition: boolean,
): Promise<RunOnceOutcome> {
  let answer: string;
  const results: StatementResult[] = [];
  try {
    for (const statement of statements) results.push(await connection.execute(statement, options));
    answer = work.answer(results);
    await store.record(connection, work, answer, options.timeoutMs);
  } catch (err) {
    // The pool rolls back what is left open; nothing of it, the claim included, was committed.
    throw beforeCommit(err);
  }
  const { ended, position } = withPosition
    ? await connection.commitWithPosition(options.timeoutMs)
    : { ended: await connection.commit(options.timeoutMs), position: undefined };
  if (ended === "rolled back") {
    throw new GatewayError("TRANSACTION_ABORTED", "the database rolled the write back at COMMIT; nothing was applied");
  }
  return { results, recorded: { answer, replayed: false }, position };
}

/** Before COMMIT was sent, a lost session means the transaction rolled back: nothing was applied, safe to run again. */
function beforeCommit(err: unknown): unknown {
  if (!outcomeUnknown(err)) return err;
  return new GatewayError("CONNECTION_LOST", `the connection was lost before COMMIT; nothing was applied (${(err as Error).message})`, { cause: err });
}
