/**
 * An interactive transaction's COMMIT under an idempotency key: the key and the commit's answer are
 * inserted in the transaction just before COMMIT, so they commit with it or not at all. A commit sent
 * again after the transaction is gone (its COMMIT went unanswered, its session was killed, another
 * task is asked) settles the outcome from the record: the key present means it committed (the
 * recorded answer is sent again); absent, once any COMMIT still in flight has ended, means it did not.
 */
import type { EngineConnection } from "../engines/engine.js";
import { fingerprint } from "./fingerprint.js";
import type { KeyedWork, RecordedAnswer } from "./keyed-work.js";
import { claimKey } from "./run-once.js";
import { type IdempotencyStore, keyReused } from "./store.js";

/** What a surface sends with a keyed commit: the key, its name, and its answer to a committed transaction. */
export interface CommitKey {
  readonly key: string;
  readonly surface: string;
  readonly answer: string;
}

/**
 * The keyed work of a commit. Only the tenant of the caller's RunAs is read (execution/run-as.ts): keys
 * belong to a principal; the rest of RunAs is the execution core's, which this folder sits below.
 */
export function keyedCommit(commitKey: CommitKey, transactionId: string, runAs: { readonly tenant: string }): KeyedWork {
  return {
    principal: runAs.tenant,
    key: commitKey.key,
    fingerprint: fingerprint({ surface: commitKey.surface, operation: "commit", transactionId }),
    answer: () => commitKey.answer,
  };
}

/** In the transaction, before COMMIT: refuses a key recorded for another request, else records this one. */
export async function recordBeforeCommit(connection: EngineConnection, store: IdempotencyStore, work: KeyedWork, timeoutMs: number): Promise<void> {
  const found = await store.find(connection, work, timeoutMs);
  if (found !== undefined) throw keyReused();
  await store.claim(connection, work, work.answer([]), timeoutMs);
}

/**
 * The recorded answer of a commit that is no longer open here, or undefined when it did not commit.
 * The probe claims the key in a transaction of its own and rolls it back: the claim waits on the
 * unique index for a COMMIT still in flight, so "absent" is final, never "not yet".
 */
export async function settleCommit(connection: EngineConnection, store: IdempotencyStore, work: KeyedWork, timeoutMs: number): Promise<RecordedAnswer | undefined> {
  const options = { timeoutMs, bigNumbers: "string" as const, maxResultBytes: 1024, maxResultRows: 1 };
  if (await claimKey(connection, store, work, {}, options)) {
    await connection.rollback(timeoutMs);
    return undefined;
  }
  const found = await store.find(connection, work, timeoutMs);
  if (found === undefined) return undefined;
  if (found.fingerprint !== work.fingerprint || found.answer === null) throw keyReused();
  return { answer: found.answer, replayed: true };
}
