/**
 * One attempt, written once: route → acquire → run → classify → release, retried as a whole by the
 * plan's policy. Every way work runs outside an interactive transaction (a statement, a batch, a keyed
 * write, a read-only principal's work, a stream) is a small body handed to it (executor.ts,
 * streams.ts); the attempt owns the session from the moment it is taken until it goes back. Its fast
 * path is at its top: where the route needs no wait and the pool has a session ready, the body runs
 * at once, with no promise or turn of the attempt's own (docs/performance.md, "No promise or turn of
 * its own"); anything else takes the slow path, which waits for the route and the session. Work for
 * the primary holds the primary's lease from the topology, so a caller queued on a pool that stops
 * being the primary's moves on at once. A failure means what the failure model says (failure.ts): a
 * failover sign is told to the topology, and the retry policy reads the outcome's error.
 * Interactive transactions take their session here too (`acquire` / `release`).
 */
import type { ErrorCode } from "../../schemas/errors.js";
import type { Intent } from "../../schemas/query.js";
import type { Clock } from "../clock.js";
import type { GatewayConfig } from "../config/schema.js";
import type { EngineConnection, ExecuteOptions, RowCursor } from "../engines/engine.js";
import { type ClusterEvents, UNHEARD } from "../events.js";
import type { Pool } from "../pool/pool.js";
import type { PoolEntry } from "../pool/pool-entry.js";
import type { PoolSet } from "../pool/pool-set.js";
import type { RouteRequest, Router } from "../routing/router.js";
import type { Endpoint } from "../topology/endpoint.js";
import type { Topology } from "../topology/topology.js";
import { endingCursor } from "./ending-cursor.js";
import { isDatabaseRefusal, isReadOnlyRefusal, type Outcome, outcomeOf, type Unit } from "./failure.js";
import type { Plan } from "./plan.js";
import { type Attempted, retriedAfter, runWithRetry } from "./retry.js";
import type { RunAs } from "./run-as.js";

/** A session held for work the caller drives itself (an interactive transaction). */
export interface Lease {
  endpoint: Endpoint;
  pool: Pool;
  entry: PoolEntry;
}

/**
 * An attempt's state, shared by its retries and seen by its body: where the work is routed (a read a
 * replica refused as a write is routed again as a write) and the endpoint it runs on now.
 */
export interface AttemptState<T> {
  readonly plan: Plan;
  route: RouteRequest;
  endpoint: Endpoint | undefined;
  readonly body: Body<T>;
  /** Run before each attempt routes (a keyed write makes sure the idempotency record exists). */
  readonly prepare: (() => Promise<void>) | undefined;
}

/** What runs on the session: its statements, with what is left of the plan's timeout. */
export type Body<T> = (connection: EngineConnection, options: ExecuteOptions, attempt: AttemptState<T>) => Promise<T>;

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

/** The plan's options for one attempt, once it has its session: its statements get what is left of its timeout. */
function within(options: ExecuteOptions, route: RouteRequest, clock: Clock): ExecuteOptions {
  const remainingMs = Math.ceil(route.deadline - clock.now());
  return remainingMs >= options.timeoutMs ? options : Object.assign({}, options, { timeoutMs: Math.max(1, remainingMs) });
}

export class Attempts {
  constructor(
    private readonly router: Router,
    private readonly topology: Topology,
    private readonly pools: PoolSet<Endpoint>,
    private readonly config: GatewayConfig,
    private readonly clock: Clock,
    /** Where every retried failure is told (the metrics count them). */
    private readonly events: ClusterEvents = UNHEARD,
  ) {}

  /**
   * Runs `body` for `plan` where its route leads, again on the failures the plan's retry policy
   * allows, until the route's deadline. Not async: a first attempt that needs no wait is the body's
   * promise and one step more.
   */
  run<T>(plan: Plan, body: Body<T>, prepare?: () => Promise<void>): Promise<Attempted<T>> {
    const attempt: AttemptState<T> = { plan, route: plan.route, endpoint: undefined, body, prepare };
    let first: Promise<T>;
    try {
      first = prepare === undefined ? this.now(attempt) : this.later(attempt);
    } catch (err) {
      // A step that throws at once fails as an async function would (promise-from.ts).
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      first = Promise.reject(err);
    }
    return retriedAfter(first, plan.retry, plan.route.deadline, this.clock, this.again, attempt, this.noteRetry);
  }

  /** The fast path: the endpoint and a ready session, with no wait; else the slow path. */
  private now<T>(attempt: AttemptState<T>): Promise<T> {
    const { plan } = attempt;
    const endpoint = plan.primaryOnly ? this.topology.primary() : this.router.routeNow(attempt.route);
    if (endpoint === undefined) return this.later(attempt);
    const onReplica = endpoint.role === "replica";
    const pool = this.pools.get(endpoint, plan.runAs.login);
    const entry = pool.acquireNow({ tenant: plan.runAs.tenant, share: plan.runAs.share }, onReplica ? undefined : this.topology.primaryLease(endpoint));
    if (entry === undefined) return this.waitForSession(attempt, endpoint, pool);
    endpoint.beginWork();
    return this.runOn(attempt, endpoint, pool, entry);
  }

  /** Every attempt after the first (a method, not a closure per request: see retry.ts). */
  private readonly again = <T>(attempt: AttemptState<T>): Promise<T> => this.later(attempt);

  /** The slow path: waits for the route (a failover, a replica catching up) and then for a session. */
  private async later<T>(attempt: AttemptState<T>): Promise<T> {
    if (attempt.prepare !== undefined) await attempt.prepare();
    const endpoint = await this.destination(attempt.plan, attempt.route);
    return this.waitForSession(attempt, endpoint, this.pools.get(endpoint, attempt.plan.runAs.login));
  }

  /** Where the route leads, waiting for it: the primary when the surface runs everything there, else the router's choice. */
  private destination(plan: Plan, route: RouteRequest): Promise<Endpoint> {
    return plan.primaryOnly ? this.router.primary(route.deadline) : this.router.route(route);
  }

  private async waitForSession<T>(attempt: AttemptState<T>, endpoint: Endpoint, pool: Pool): Promise<T> {
    const { route, plan } = attempt;
    endpoint.beginWork();
    const entry = await this.acquireOn(pool, endpoint, route.intent, endpoint.role === "replica", plan.runAs, route.deadline, true);
    return this.runOn(attempt, endpoint, pool, entry);
  }

  /**
   * The body on a session taken for it, released when it settles. Not async: a body that succeeds is
   * answered in the turn it ends; a failure is classified before the session goes back.
   */
  private runOn<T>(attempt: AttemptState<T>, endpoint: Endpoint, pool: Pool, entry: PoolEntry): Promise<T> {
    const { plan } = attempt;
    const timing = plan.timing;
    const started = timing === undefined ? 0 : this.clock.now();
    attempt.endpoint = endpoint;
    let work: Promise<T>;
    try {
      work = attempt.body(entry.connection, within(plan.options, attempt.route, this.clock), attempt);
    } catch (err) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      work = Promise.reject(err);
    }
    return work.then(
      (value) => {
        if (timing !== undefined) timing.databaseMs += this.clock.now() - started;
        endLease(endpoint, pool, entry);
        return value;
      },
      (err: unknown) => {
        if (timing !== undefined) timing.databaseMs += this.clock.now() - started;
        return this.failed(attempt, err, entry, endpoint, pool);
      },
    );
  }

  /**
   * The body failed: its outcome (failure.ts), then the session goes back. A read a replica refused
   * as a write (a user function not in routing.writingFunctions) applied nothing: it runs on the
   * primary, as a write, in the same attempt.
   */
  private async failed<T>(attempt: AttemptState<T>, err: unknown, entry: PoolEntry, endpoint: Endpoint, pool: Pool): Promise<T> {
    const { plan, route } = attempt;
    const onReplica = endpoint.role === "replica";
    let outcome: Outcome;
    try {
      outcome = await this.outcome(err, entry, endpoint, route.intent, onReplica, onReplica || (plan.knownReadOnly && route.intent === "read"));
    } finally {
      endLease(endpoint, pool, entry);
    }
    if (!(outcome.runAsWrite && plan.scope === "statement" && plan.keyed === undefined && !plan.runAs.readOnly)) throw outcome.error;
    attempt.route = Object.assign({}, route, { intent: "write" as const });
    return this.later(attempt);
  }

  /** A failure of work on a session, as the failure model reads it; a write refused by a demoted primary retires its session. */
  private async outcome(err: unknown, entry: PoolEntry, endpoint: Endpoint, intent: Intent, onReplica: boolean, rerun: boolean): Promise<Outcome> {
    let instanceReadOnly = false;
    if (isReadOnlyRefusal(err) && !onReplica) {
      // The session's own READ ONLY (SET TRANSACTION READ ONLY, default_transaction_read_only) is the
      // caller's business; only an instance that is really read-only now is a failover sign.
      instanceReadOnly = await instanceIsReadOnly(entry.connection, this.config.topology.checkTimeoutMs, true);
      // A session that refused a write on a demoted instance: never reuse it.
      if (instanceReadOnly) entry.retireOnRelease = "refused a write as read-only";
    }
    return this.told(err, endpoint, intent, onReplica, "statement", rerun, instanceReadOnly, true);
  }

  /** Every retried failure, told to the cluster's events (one function for all requests, not one per request). */
  private readonly noteRetry = (code: ErrorCode): void => {
    this.events.emit("retry", { code });
  };

  /**
   * One attempt of `work` on a given endpoint, not retried (the embedded database's admin work; the
   * settling of a keyed commit on the primary).
   */
  async once<T>(endpoint: Endpoint, intent: Intent, runAs: RunAs, deadline: number, work: (connection: EngineConnection) => Promise<T>): Promise<T> {
    const onReplica = endpoint.role === "replica";
    const pool = this.pools.get(endpoint, runAs.login);
    endpoint.beginWork();
    const entry = await this.acquireOn(pool, endpoint, intent, onReplica, runAs, deadline, true);
    try {
      return await work(entry.connection);
    } catch (err) {
      throw (await this.outcome(err, entry, endpoint, intent, onReplica, onReplica)).error;
    } finally {
      endLease(endpoint, pool, entry);
    }
  }

  /**
   * A stream: route → acquire → open (the body) → (the caller pulls batches) → classify → release,
   * retried as a whole until it has opened. The session is held only while the stream runs: it goes
   * back the moment the stream ends, fails or is closed (the engine cancels a statement still
   * producing rows first, or cuts the session when it cannot end it cleanly). A failure after the
   * stream opened is told to the topology but never run again: rows have been handed on.
   */
  stream(plan: Plan, open: (connection: EngineConnection) => Promise<RowCursor>): Promise<Attempted<RowCursor>> {
    return runWithRetry(plan.retry, plan.route.deadline, this.clock, () => this.openStream(plan, open), this.noteRetry);
  }

  private async openStream(plan: Plan, open: (connection: EngineConnection) => Promise<RowCursor>): Promise<RowCursor> {
    const { route, runAs, timing } = plan;
    const endpoint = (plan.primaryOnly ? this.topology.primary() : this.router.routeNow(route)) ?? (await this.destination(plan, route));
    const onReplica = endpoint.role === "replica";
    const pool = this.pools.get(endpoint, runAs.login);
    endpoint.beginWork();
    const entry = await this.acquireOn(pool, endpoint, route.intent, onReplica, runAs, route.deadline, true);
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
      const outcome = await this.outcome(err, entry, endpoint, route.intent, onReplica, onReplica);
      release();
      throw outcome.error;
    }
    const end = async (): Promise<void> => {
      try {
        await cursor.close();
      } finally {
        release();
      }
    };
    // Told to the topology; the caller gets the failure itself (nothing runs again).
    return endingCursor(cursor, end, (err) => {
      this.told(err, endpoint, route.intent, onReplica, "open stream");
      return err;
    });
  }

  /**
   * A session where the route leads, for work the caller drives itself (an interactive transaction's
   * BEGIN): followed to the new primary if a failover moves it while the caller waits, within the
   * route's deadline. The caller gives it back with `release`.
   */
  async acquire(route: RouteRequest, runAs: RunAs): Promise<Lease> {
    const { value } = await runWithRetry(this.config.retry, route.deadline, this.clock, async () => {
      const endpoint = await this.router.route(route);
      const onReplica = endpoint.role === "replica";
      const pool = this.pools.get(endpoint, runAs.login);
      return { endpoint, pool, entry: await this.acquireOn(pool, endpoint, route.intent, onReplica, runAs, route.deadline) };
    }, this.noteRetry);
    value.endpoint.beginWork();
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
   * now (failure.ts); one that could not be had where it still points is the caller's answer (another
   * wait in the same queue, behind later callers, would not be fairer).
   */
  private acquireOn(pool: Pool, endpoint: Endpoint, intent: Intent, onReplica: boolean, runAs: RunAs, deadline: number, counted = false): Promise<PoolEntry> {
    const lease = onReplica ? undefined : this.topology.primaryLease(endpoint);
    return pool.acquire({ tenant: runAs.tenant, share: runAs.share }, { deadline, signal: lease }).catch((err: unknown) => {
      // `counted`: the caller counted the work as outstanding on the endpoint; none could be had.
      if (counted) endpoint.endWork();
      // Where the topology pointed when the wait ended, before this failure's own failover sign.
      const stillServes = onReplica ? endpoint.servesReads : this.topology.primary() === endpoint;
      throw this.told(err, endpoint, intent, onReplica, "acquire", onReplica, false, stillServes).error;
    });
  }

  /** The failure model's outcome for work sent to `endpoint`, a failover sign told to the topology. */
  private told(err: unknown, endpoint: Endpoint, intent: Intent, onReplica: boolean, unit: Unit, rerun = onReplica, instanceReadOnly = false, stillServes = true): Outcome {
    const outcome = outcomeOf(err, { unit, intent, endpoint: endpoint.name, onReplica, rerun, instanceReadOnly, stillServes });
    if (outcome.failoverSign) this.topology.signalFailover(isReadOnlyRefusal(err) ? `write refused as read-only by ${endpoint.name}` : `${endpoint.name}: ${(err as Error).message}`, endpoint);
    return outcome;
  }
}

/** A lease ends: the session goes back to its pool, and the work no longer counts as outstanding on the endpoint. */
function endLease(endpoint: Endpoint, pool: Pool, entry: PoolEntry): void {
  endpoint.endWork();
  pool.release(entry);
}
