/**
 * Opening a session with a credentials source: ask it for a login, and when the server refuses that
 * login, tell the source and try once more if it came up with a different one (a rotated secret, a
 * fresh token). One retry is enough for a rotation and bounded when the database refuses everyone.
 */
import { performance } from "node:perf_hooks";
import type { DatabaseCredentials, DatabaseLogin, SessionTarget } from "./database-credentials.js";

export interface AuthenticatedConnect<T> {
  /** undefined: the URL's own credentials. */
  credentials: DatabaseCredentials | undefined;
  target: SessionTarget;
  timeoutMs: number;
  /** Opens one session with the login (or the URL's), within timeoutMs. */
  open(login: DatabaseLogin | undefined, timeoutMs: number): Promise<T>;
  /** Whether the server refused the login (and nothing else went wrong). */
  isAuthenticationFailure(err: unknown): boolean;
  /** The engine's safe description of a connect error. */
  describe(err: unknown): string;
}

export async function connectAuthenticated<T>(attempt: AuthenticatedConnect<T>): Promise<T> {
  const { credentials } = attempt;
  if (credentials === undefined) return attempt.open(undefined, attempt.timeoutMs);
  const deadline = performance.now() + attempt.timeoutMs;
  const login = await credentials.current(attempt.target);
  try {
    return await attempt.open(login, attempt.timeoutMs);
  } catch (err) {
    if (!attempt.isAuthenticationFailure(err)) throw err;
    let changed: boolean;
    try {
      changed = await credentials.afterAuthenticationFailure(login, attempt.target);
    } catch (refreshErr) {
      const why = refreshErr instanceof Error ? refreshErr.message : String(refreshErr);
      throw new Error(`${attempt.describe(err)}; reading the credentials again failed: ${why}`, { cause: err });
    }
    const remainingMs = Math.floor(deadline - performance.now());
    if (!changed || remainingMs <= 0) throw err;
    return attempt.open(await credentials.current(attempt.target), remainingMs);
  }
}
