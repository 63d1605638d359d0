/**
 * The one error class the gateway throws on purpose. It carries a registry code (status and
 * retryability come from the registry, never from the throw site) and the original `cause`.
 */
import { type DatabaseErrorInfo, ERROR_CODES, type ErrorCode, type PoolState } from "../schemas/errors.js";

export interface GatewayErrorExtras {
  cause?: unknown;
  database?: DatabaseErrorInfo;
  pool?: PoolState;
  attempts?: number;
  issues?: { path: string; message: string }[];
  /** Seconds for Retry-After on 503s; defaults to 1. */
  retryAfterS?: number;
  /** The gateway already waited for this condition: retryable by the caller, not again inside. */
  final?: boolean;
  /** The instance refused a write because it is read-only (a demoted primary): nothing was applied. */
  refusedAsReadOnly?: boolean;
  /**
   * The database refused the statement as a write it may not do here: a READ ONLY transaction or
   * instance, or the login's grants. What a read-only principal's refused statement is.
   */
  refusedAsWrite?: boolean;
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly database: DatabaseErrorInfo | undefined;
  readonly pool: PoolState | undefined;
  attempts: number | undefined;
  readonly issues: { path: string; message: string }[] | undefined;
  readonly retryAfterS: number | undefined;
  readonly final: boolean;
  readonly refusedAsReadOnly: boolean;
  readonly refusedAsWrite: boolean;

  constructor(code: ErrorCode, message: string, extras: GatewayErrorExtras = {}) {
    super(message, extras.cause === undefined ? undefined : { cause: extras.cause });
    this.name = "GatewayError";
    this.code = code;
    this.database = extras.database;
    this.pool = extras.pool;
    this.attempts = extras.attempts;
    this.issues = extras.issues;
    this.retryAfterS = extras.retryAfterS;
    this.final = extras.final ?? false;
    this.refusedAsReadOnly = extras.refusedAsReadOnly ?? false;
    this.refusedAsWrite = extras.refusedAsWrite ?? false;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get retryable(): boolean {
    return ERROR_CODES[this.code].retryable;
  }
}
