/**
 * Where the idempotency record's administrative work (the table's creation and cleanup) runs: on a
 * session of the primary on the read-write login, opened for it outside every pool, so that it
 * neither waits behind nor takes a caller's session. The embedded database has a single session,
 * which its pool lends instead. And the check of the table at start-up.
 */
import type { Clock } from "../clock.js";
import type { EngineConnection } from "../engines/engine.js";
import { isIdempotencyUnavailable } from "../failure-meaning.js";
import type { Logger } from "../logger.js";
import type { AdminSession, IdempotencyStore } from "./store.js";

/** How the cluster reaches its primary for administrative work. */
export interface PrimaryAccess {
  /** The primary's URL as soon as one is known, or a rejection at the deadline (clock ms). */
  primaryUrl(deadline: number): Promise<string>;
  /** A new session to that URL on the read-write login, outside every pool. */
  connect(url: string, timeoutMs: number): Promise<EngineConnection>;
  /** The bound on opening it (pool.connectTimeoutMs). */
  connectTimeoutMs: number;
}

/** Work on a session lent from the embedded database's one-session pool, within the deadline. */
export type LendSession = <T>(deadline: number, work: (connection: EngineConnection) => Promise<T>) => Promise<T>;

/** Administrative sessions of the primary, opened and closed for each piece of work. */
export function primaryAdminSession(primary: PrimaryAccess, clock: Clock): AdminSession {
  return async <T>(timeoutMs: number, work: (connection: EngineConnection) => Promise<T>): Promise<T> => {
    const deadline = clock.now() + timeoutMs;
    const url = await primary.primaryUrl(deadline);
    const connection = await primary.connect(url, Math.min(timeoutMs, primary.connectTimeoutMs));
    try {
      return await work(connection);
    } finally {
      await connection.close().catch(() => connection.destroy());
    }
  };
}

/** The embedded database's administrative session: its one session, lent by its pool. */
export function lentAdminSession(lend: LendSession, clock: Clock): AdminSession {
  return <T>(timeoutMs: number, work: (connection: EngineConnection) => Promise<T>): Promise<T> => lend(clock.now() + timeoutMs, work);
}

/**
 * Checks the idempotency table while starting: a table that is missing and cannot be created, or that
 * the read-write login cannot use, refuses the start with the grant it needs (IDEMPOTENCY_UNAVAILABLE)
 * rather than failing every keyed write later. A database that cannot be asked now is asked again by
 * the first keyed write.
 */
export async function checkTableAtStart(store: IdempotencyStore, timeoutMs: number, logger: Logger): Promise<void> {
  try {
    await store.check(timeoutMs);
  } catch (err) {
    if (isIdempotencyUnavailable(err)) throw err;
    logger.warn({ err: String(err) }, "idempotency table not checked at start; the first keyed write checks it");
  }
}
