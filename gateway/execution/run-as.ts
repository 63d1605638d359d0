/**
 * On whose behalf work runs, as the execution core sees it (the auth layer decides it; the core knows
 * no principals or HTTP): the pool tenant and its share of each pool, the database login its sessions
 * use, whether its work must be read-only on the database itself, and its own statement-timeout ceiling.
 */
import { type LoginKey, READ_WRITE_LOGIN } from "../credentials/logins.js";

export interface RunAs {
  /** The pool tenant (the principal); "" when callers are not told apart. */
  readonly tenant: string;
  /** Fraction of each endpoint pool the tenant may hold at once. */
  readonly share: number;
  /** Fraction of each endpoint pool the tenant's open interactive transactions may pin. */
  readonly transactionShare: number;
  /** The database login whose pools serve it. */
  readonly login: LoginKey;
  /**
   * Read-only principals: every statement runs in a READ ONLY transaction that ends in ROLLBACK, one
   * statement per string, after the statements that could change the access mode are refused.
   */
  readonly readOnly: boolean;
  /** The largest statement timeout this caller may ask for (below statements.maxTimeoutMs). */
  readonly maxTimeoutMs?: number | undefined;
}

export const UNRESTRICTED: RunAs = Object.freeze({ tenant: "", share: 1, transactionShare: 1, login: READ_WRITE_LOGIN, readOnly: false });
