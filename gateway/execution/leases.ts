/**
 * The lease: acquire a session where the route leads → run → classify the failure → release. Work for
 * the primary holds the primary's lease from the topology, so a caller queued on a pool that stops
 * being the primary's moves on at once; failures that smell of failover are reported to the topology
 * and turned into what the retry policy understands (a refused write was not applied; a read lost on a
 * replica runs elsewhere). Both the autocommit executor and interactive transactions lease through here.
 */
import type { ErrorCode } from "../../schemas/errors.js";
import type { Intent } from "../../schemas/query.js";
import type { PoolSet } from "../pool/pool-set.js";
import type { GatewayConfig } from "../config/schema.js";
import type { EngineConnection, RowCursor } from "../engines/engine.js";
import { type ClusterEvents, UNHEARD } from "../events.js";
import type { Clock } from "../clock.js";
import { promiseFrom } from "../promise-from.js";
import type { Pool } from "../pool/pool.js";
import type { PoolEntry } from "../pool/pool-entry.js";
import type { RouteRequest, Router } from "../routing/router.js";
import type { Endpoint } from "../topology/endpoint.js";
import type { Topology } from "../topology/topology.js";
import { endingCursor } from "./ending-cursor.js";
import { isDatabaseRefusal, isReadOnlyRefusal, outcomeOf, type Unit } from "./failure.js";
import { type Attempted, type RetrySettings, runWithRetry } from "./retry.js";
import type { RunAs } from "./run-as.js";
import type { WorkTiming } from "./work-timing.js";

/** A session held for work the caller drives itself (an interactive transaction). */
export interface Lease {
  endpoint: Endpoint;
  pool: Pool;
  entry: PoolEntry;
}

/**
 * Asks the session's instance for its role: a replica, or a session lost on the way, confirms a
 * demoted primary. A session in a failed transaction cannot answer; with `mayRollBack` (the gateway's
 * own statement or batch, which has failed anyway) it is rolled back and asked again, otherwise (the
 * caller's open transaction) the refusal is taken as the caller's own and the monitor stays the judge.
 */
export async function instanceIsReadOnly(connection: EngineConnection, timeoutMs: number, mayRollBack: boolean): Promise<boolean> {
  const ask = () => connection.inspect(timeoutMs).then((state) => state.role === "replica", (err: unknown) => err);
  let answer = await ask();
  if (typeof answer !== "boolean" && isDatabaseRefusal(answer) && mayRollBack) {
    await connection.rollback(timeoutMs).catch(() => undefined);
    answer = await ask();
  }
  if (typeof answer === "boolean") return answer;
  return !isDatabaseRefusal(answer);
}

export class Leases {
  constructor(
    private readonly router: Router,
    private readonly topology: Topology,
    private readonly pools: PoolSet<Endpoint>,
    private readonly config: GatewayConfig,
    private readonly clock: Clock,
    /** Where every retried failure is told (the metrics count them). */
    private readonly events: ClusterEvents = UNHEARD,
  ) {}

  /** Runs `unit` again on the failures the retry policy allows, until the route's deadline. */
  retrying<T>(settings: RetrySettings, route: RouteRequest, unit: (attempt: number) => Promise<T>): Promise<Attempted<T>> {
    return runWithRetry(settings, route.deadline, this.clock, unit, this.noteRetry);
  }

  /** Every retried failure, told to the cluster's events (one function for all requests, not one per request). */
  private readonly noteRetry = (code: ErrorCode): void => {
    this.events.emit("retry", { code });
  };

  /** The endpoint for a route: the primary when the surface runs everything there, else the router's choice. */
  endpointFor(route: RouteRequest, primaryOnly: boolean): Promise<Endpoint> {
    return primaryOnly ? this.router.primary(route.deadline) : this.router.endpointFor(route);
  }

  /**
   * The same choice when it needs no wait, else undefined (then endpointFor waits): callers on the hot
   * path take it first, with no promise or turn of its own (awaiting a plain value would cost both).
   */
  endpointNow(route: RouteRequest, primaryOnly: boolean): Endpoint | undefined {
    return primaryOnly ? this.topology.primary() : this.router.endpointNow(route);
  }

  /**
   * A session of the endpoint, counted as outstanding work on it until the caller releases it (the
   * count is given back at once when none could be had). Not async: the pool's promise is the answer.
   */
  private take(endpoint: Endpoint, pool: Pool, intent: Intent, onReplica: boolean, runAs: RunAs, deadline: number): Promise<PoolEntry> {
    endpoint.outstanding++;
    return this.acquireOn(pool, endpoint, intent, onReplica, runAs, deadline, true);
  }

  /**
   * A session of the endpoint that is ready now (Pool.acquireNow), counted as outstanding work on it;
   * undefined when one must be waited for or checked first (then `take`). Work for the primary asks
   * under the primary's lease, as `take` does: none is lent where the primary no longer is.
   */
  private takeNow(endpoint: Endpoint, pool: Pool, onReplica: boolean, runAs: RunAs): PoolEntry | undefined {
    const entry = pool.acquireNow({ tenant: runAs.tenant, share: runAs.share }, onReplica ? undefined : this.topology.primaryLease(endpoint));
    if (entry !== undefined) endpoint.outstanding++;
    return entry;
  }

  /**
   * Borrows a session of the endpoint for `work`, and reports failover signs on the way out. The
   * route's deadline bounds the wait for a session. With `timing` (query insights on), the time the
   * work held the session is added to it. `knownReadOnly` (Plan.knownReadOnly): the work is known to
   * only read, so a read lost on the primary too is run again.
   */
  run<T>(
    endpoint: Endpoint,
    intent: Intent,
    runAs: RunAs,
    deadline: number,
    work: (connection: EngineConnection) => Promise<T>,
    timing?: WorkTiming,
    knownReadOnly = false,
  ): Promise<T> {
    // `onReplica` is what the endpoint was when the work was sent there, not when an error comes back.
    // Known read-only work lost anywhere is as harmless as a read lost on a replica.
    const onReplica = endpoint.role === "replica";
    const rerun = onReplica || (knownReadOnly && intent === "read");
    const pool = this.pools.get(endpoint, runAs.login);
    // A ready session is taken without a promise or a turn; else the pool's wait (or check).
    const entry = this.takeNow(endpoint, pool, onReplica, runAs);
    if (entry !== undefined) return this.runOn(entry, endpoint, pool, intent, onReplica, work, timing, rerun);
    return this.take(endpoint, pool, intent, onReplica, runAs, deadline).then((taken) => this.runOn(taken, endpoint, pool, intent, onReplica, work, timing, rerun));
  }

  /**
   * `work` on a session taken for it, released when it settles. Not async: work that succeeds is
   * answered in the turn it ends, with no promise or turn of the lease's own; a failure is classified
   * (failed) before the session goes back.
   */
  private runOn<T>(
    entry: PoolEntry,
    endpoint: Endpoint,
    pool: Pool,
    intent: Intent,
    onReplica: boolean,
    work: (connection: EngineConnection) => Promise<T>,
    timing: WorkTiming | undefined,
    rerun: boolean,
  ): Promise<T> {
    const started = timing === undefined ? 0 : this.clock.now();
    return promiseFrom(work, entry.connection).then(
      (value) => {
        if (timing !== undefined) timing.databaseMs += this.clock.now() - started;
        endLease(endpoint, pool, entry);
        return value;
      },
      (err: unknown) => {
        if (timing !== undefined) timing.databaseMs += this.clock.now() - started;
        return this.failed(err, entry, endpoint, pool, intent, onReplica, rerun);
      },
    );
  }

  /** Work on a session failed: the failure as the retry policy reads it (classify), then the session goes back. */
  private async failed(err: unknown, entry: PoolEntry, endpoint: Endpoint, pool: Pool, intent: Intent, onReplica: boolean, rerun: boolean): Promise<never> {
    try {
      throw await this.classify(err, entry, endpoint, intent, onReplica, rerun);
    } finally {
      endLease(endpoint, pool, entry);
    }
  }

  /**
   * The streaming form of `run`: acquire → open the stream → (the caller pulls batches) → classify →
   * release. The session is held only while the stream runs: it goes back to the pool the moment the
   * stream ends, fails or is closed (the engine cancels a statement still producing rows first, or
   * cuts the session when it cannot end it cleanly). A failure after the stream opened is reported to
   * the topology like any other but never turned into a retry: rows have been handed on. With
   * `timing` (query insights on), the time the session was held is added to it.
   */
  async stream(
    endpoint: Endpoint,
    intent: Intent,
    runAs: RunAs,
    deadline: number,
    open: (connection: EngineConnection) => Promise<RowCursor>,
    timing?: WorkTiming,
  ): Promise<RowCursor> {
    const onReplica = endpoint.role === "replica";
    const pool = this.pools.get(endpoint, runAs.login);
    const entry = this.takeNow(endpoint, pool, onReplica, runAs) ?? (await this.take(endpoint, pool, intent, onReplica, runAs, deadline));
    const taken = timing === undefined ? 0 : this.clock.now();
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      if (timing !== undefined) timing.databaseMs += this.clock.now() - taken;
      endLease(endpoint, pool, entry);
    };
    let cursor: RowCursor;
    try {
      cursor = await open(entry.connection);
    } catch (err) {
      const failure = await this.classify(err, entry, endpoint, intent, onReplica);
      release();
      throw failure;
    }
    const end = async (): Promise<void> => {
      try {
        await cursor.close();
      } finally {
        release();
      }
    };
    return endingCursor(cursor, end, (err) => {
      // Told to the topology; the caller gets the failure itself (nothing runs again).
      this.failoverAware(err, endpoint, intent, onReplica, "open stream");
      return err;
    });
  }

  /**
   * A failure of leased work as the failure model reads it (failure.ts): the topology is told a
   * failover sign; a write refused by a demoted primary retires its session.
   */
  private async classify(err: unknown, entry: PoolEntry, endpoint: Endpoint, intent: Intent, onReplica: boolean, rerun = onReplica): Promise<unknown> {
    let instanceReadOnly = false;
    if (isReadOnlyRefusal(err) && !onReplica) {
      // The session's own READ ONLY (SET TRANSACTION READ ONLY, default_transaction_read_only) is the
      // caller's business; only an instance that is really read-only now is a failover sign.
      instanceReadOnly = await instanceIsReadOnly(entry.connection, this.config.topology.checkTimeoutMs, true);
      // A session that refused a write on a demoted instance: never reuse it.
      if (instanceReadOnly) entry.retireOnRelease = "refused a write as read-only";
    }
    return this.failoverAware(err, endpoint, intent, onReplica, "statement", rerun, instanceReadOnly);
  }

  /**
   * A session where the route leads, for work the caller drives itself (an interactive transaction's
   * BEGIN): followed to the new primary if a failover moves it while the caller waits, within the
   * route's deadline. The caller returns it with `release`.
   */
  async borrow(route: RouteRequest, runAs: RunAs): Promise<Lease> {
    const { value } = await this.retrying(this.config.retry, route, async () => {
      const endpoint = await this.router.endpointFor(route);
      const onReplica = endpoint.role === "replica";
      const pool = this.pools.get(endpoint, runAs.login);
      return { endpoint, pool, entry: await this.acquireOn(pool, endpoint, route.intent, onReplica, runAs, route.deadline) };
    });
    value.endpoint.outstanding++;
    return value;
  }

  release(lease: Lease): void {
    endLease(lease.endpoint, lease.pool, lease.entry);
  }

  /**
   * A session of the endpoint. Work for the primary holds the primary's lease: if the endpoint stops
   * being the primary while the caller waits (a failover began, or was over before the caller
   * queued), the wait ends at once with PRIMARY_UNAVAILABLE, which is retried where the primary now
   * is. A session that could not be had where the topology no longer points is sought where it points
   * now, in the same way; one that could not be had where it still points is the caller's answer
   * (another wait in the same queue, behind later callers, would not be fairer).
   */
  private acquireOn(pool: Pool, endpoint: Endpoint, intent: Intent, onReplica: boolean, runAs: RunAs, deadline: number, counted = false): Promise<PoolEntry> {
    const lease = onReplica ? undefined : this.topology.primaryLease(endpoint);
    return pool.acquire({ tenant: runAs.tenant, share: runAs.share }, { deadline, signal: lease }).catch((err: unknown) => {
      // `counted`: the caller counted the work as outstanding on the endpoint; none could be had.
      if (counted) endpoint.outstanding--;
      // Where the topology pointed when the wait ended, before this failure's own failover sign: an
      // endpoint the monitor still trusted (a login refused, a full server) is the caller's answer,
      // not a reason to wait again.
      const stillServes = onReplica ? endpoint.servesReads : this.topology.primary() === endpoint;
      throw this.failoverAware(err, endpoint, intent, onReplica, "acquire", onReplica, false, stillServes);
    });
  }

  /** The failure model's outcome (failure.ts) for work sent to `endpoint`: a failover sign is told to the topology; the answer is its error. */
  private failoverAware(
    err: unknown,
    endpoint: Endpoint,
    intent: Intent,
    onReplica: boolean,
    unit: Unit,
    rerun = onReplica,
    instanceReadOnly = false,
    stillServes = true,
  ): unknown {
    const outcome = outcomeOf(err, { unit, intent, endpoint: endpoint.name, onReplica, rerun, instanceReadOnly, stillServes });
    if (outcome.failoverSign) this.topology.signalFailover(isReadOnlyRefusal(err) ? `write refused as read-only by ${endpoint.name}` : `${endpoint.name}: ${(err as Error).message}`, endpoint);
    return outcome.error;
  }
}

/** A lease ends: the session goes back to its pool, and the work no longer counts as outstanding on the endpoint. */
function endLease(endpoint: Endpoint, pool: Pool, entry: PoolEntry): void {
  endpoint.outstanding--;
  pool.release(entry);
}
