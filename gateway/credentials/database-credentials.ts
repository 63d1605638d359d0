/**
 * Where a cluster's sessions get their database user and password when the URLs' own are not the
 * answer: a Secrets Manager secret that rotates, or IAM authentication tokens that expire. The
 * engines ask a source for a login before every new session and tell it when the server refused one;
 * the source decides whether something newer is worth one more attempt.
 */

/** A user and password for one new session. The password is not enumerable, so it never reaches a log. */
export interface DatabaseLogin {
  readonly user: string;
  readonly password: string;
}

/** The endpoint a session is opened to: IAM tokens are signed for one host and port. */
export interface SessionTarget {
  readonly host: string;
  readonly port: number;
}

export interface DatabaseCredentials {
  /**
   * How the password is presented. "password": the engine's usual exchange (SCRAM, MySQL's hashed
   * plugins). "iam-token": an RDS IAM token that the server needs in clear text (PostgreSQL PAM,
   * MySQL `mysql_clear_password`), so it is only ever sent over TLS.
   */
  readonly kind: "password" | "iam-token";
  /** Reads what the source needs once, at start-up, so that a misconfiguration fails the start. */
  prepare(): Promise<void>;
  /** The login for a new session to `target`. */
  current(target: SessionTarget): Promise<DatabaseLogin>;
  /**
   * The server refused `failed`. Resolves true when the source now holds a different login worth one
   * more attempt (read again, or minted again), false when it has nothing newer. Concurrent calls
   * share one refresh.
   */
  afterAuthenticationFailure(failed: DatabaseLogin, target: SessionTarget): Promise<boolean>;
}

/** A login whose password stays out of JSON, object inspection in logs, and spreads. */
export function databaseLogin(user: string, password: string): DatabaseLogin {
  const login = { user, password };
  Object.defineProperty(login, "password", { enumerable: false });
  return Object.freeze(login);
}

export function sameLogin(a: DatabaseLogin, b: DatabaseLogin): boolean {
  return a.user === b.user && a.password === b.password;
}

/** Where a database URL points; the engine's default port when it names none. */
export function sessionTargetOf(url: string): SessionTarget {
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1") || "127.0.0.1";
  const port = parsed.port ? Number(parsed.port) : parsed.protocol === "mysql:" ? 3306 : 5432;
  return { host, port };
}
