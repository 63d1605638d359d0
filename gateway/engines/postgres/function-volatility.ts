/**
 * What pg_proc says of the functions statements call, looked up once per name per cluster: whether
 * any function of that name is volatile (may change state: set_config, nextval, pg_advisory_lock...),
 * and whether such a volatile function is a built-in one (pg_catalog). Names pg_proc does not know
 * count as volatile built-ins, the careful answer.
 */

export interface FunctionFacts {
  /** Some function of this name is VOLATILE. */
  volatile: boolean;
  /** Some VOLATILE function of this name is in pg_catalog (or the name is unknown). */
  builtinVolatile: boolean;
}

/**
 * Volatile built-ins that change nothing another statement could see (random numbers, clocks, UUIDs,
 * sleeping): neither session state nor anything a read-only principal must not do.
 */
const HARMLESS_VOLATILE = new Set(["random", "random_normal", "clock_timestamp", "timeofday", "gen_random_uuid", "uuidv4", "uuidv7", "pg_sleep", "pg_sleep_for", "pg_sleep_until"]);

/**
 * Built-ins pg_proc marks STABLE (one answer per transaction) that nonetheless assign the transaction
 * an id: work on the server's transaction counter that READ ONLY does not stop, and that no grant can
 * withhold on Aurora (pg_catalog's functions belong to rdsadmin). Refused for read-only principals as
 * the volatile built-ins are; their `_if_assigned` forms only look, and stay allowed.
 */
const ASSIGN_TRANSACTION_ID = new Set(["txid_current", "pg_current_xact_id"]);

/** One round trip learns every unknown name of a statement. */
export const VOLATILITY_SQL =
  "SELECT p.proname::text, bool_or(p.provolatile = 'v'), bool_or(p.provolatile = 'v' AND p.pronamespace = 'pg_catalog'::regnamespace) " +
  "FROM pg_catalog.pg_proc p WHERE p.proname = ANY($1::text[]) GROUP BY p.proname";

const LIMIT = 10000;

export class FunctionVolatility {
  private readonly known = new Map<string, FunctionFacts>();

  /** The names not looked up yet. */
  unknown(names: readonly string[]): string[] {
    return names.filter((name) => !HARMLESS_VOLATILE.has(name) && !this.known.has(name));
  }

  /** Records a lookup's rows ([name, volatile, builtinVolatile]); asked names without a row are unknown functions. */
  record(asked: readonly string[], rows: readonly unknown[][]): void {
    if (this.known.size + asked.length > LIMIT) this.known.clear();
    for (const name of asked) this.known.set(name, { volatile: true, builtinVolatile: true });
    for (const [name, volatile, builtinVolatile] of rows) {
      this.known.set(String(name), { volatile: volatile === true, builtinVolatile: builtinVolatile === true });
    }
  }

  /** True when none of the functions can change session state (all looked up). */
  allStateless(names: readonly string[]): boolean {
    return names.every((name) => HARMLESS_VOLATILE.has(name) || this.known.get(name)?.volatile === false);
  }

  /**
   * The first function a read-only principal may not call: a volatile built-in that is not harmless
   * (signals to other sessions, sequences, settings, advisory locks, notifications, large objects),
   * or one that assigns a transaction id. Volatile functions of the database's own run under the
   * principal's read-only login and transaction like any other statement.
   */
  refusedForReadOnly(names: readonly string[]): string | undefined {
    return names.find((name) => ASSIGN_TRANSACTION_ID.has(name) || (!HARMLESS_VOLATILE.has(name) && this.known.get(name)?.builtinVolatile !== false));
  }
}
