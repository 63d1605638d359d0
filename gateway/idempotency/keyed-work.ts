/** The shapes the idempotency record works with: a keyed request, and what the record answers. */
import type { StatementResult } from "../engines/engine.js";

/** One principal's key for one request. */
export interface IdempotencyKey {
  /** The principal the key belongs to ("" when callers are not told apart): keys never cross principals. */
  readonly principal: string;
  readonly key: string;
  /** The request's fingerprint (fingerprint.ts): the same key with another fingerprint is refused. */
  readonly fingerprint: string;
}

/** A keyed write: the key, and how the surface words its answer (recorded with the key, before COMMIT). */
export interface KeyedWork extends IdempotencyKey {
  readonly answer: (results: readonly StatementResult[]) => string;
}

/** The answer as recorded: sent again as it is, with `replayed` when nothing ran this time. */
export interface RecordedAnswer {
  readonly answer: string;
  readonly replayed: boolean;
}

/** What a surface hands the planner with a keyed request. */
export interface KeyRequest {
  readonly key: string;
  /** The surface's name and the options that shape its answer (rowMode...), for the fingerprint. */
  readonly surface: string;
  readonly shape?: Record<string, unknown> | undefined;
  readonly answer: (results: readonly StatementResult[]) => string;
}
