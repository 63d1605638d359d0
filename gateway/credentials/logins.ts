/**
 * The database logins of a cluster and their names. Every cluster has its read-write login (the URLs'
 * user, or `credentials`); `logins` adds one the database limits to reading, for read-only principals,
 * and optionally one per principal; Data API secrets mapped to a user add theirs. Each login has pools
 * of its own on every endpoint, so a session is only ever lent under the login it was opened with.
 */

/** A login's name within its cluster. */
export type LoginKey = string;

export const READ_WRITE_LOGIN: LoginKey = "read-write";
export const READ_ONLY_LOGIN: LoginKey = "read-only";

export function principalLogin(principal: string): LoginKey {
  return `principal:${principal}`;
}

export function dataApiSecretLogin(resourceArn: string, secretArn: string): LoginKey {
  return `secret:${resourceArn} ${secretArn}`;
}

/** Which login each principal's work uses on one cluster (its policy, from the configuration). */
export interface LoginChoice {
  /** A read-only login is configured. */
  readonly readOnly: boolean;
  /** Principals (normalised) with a login of their own. */
  readonly principals: ReadonlySet<string>;
}

/**
 * A principal's own login first; then, for read-only access, the read-only login when there is one;
 * else the read-write login.
 */
export function loginFor(choice: LoginChoice | undefined, principal: string, readOnly: boolean): LoginKey {
  if (choice?.principals.has(principal)) return principalLogin(principal);
  if (readOnly && choice?.readOnly) return READ_ONLY_LOGIN;
  return READ_WRITE_LOGIN;
}
