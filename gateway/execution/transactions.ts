/**
 * Interactive transactions: BEGIN pins a connection under an unguessable id; statements carry the id;
 * COMMIT or ROLLBACK return the connection. A transaction idle past its idle timeout, or older than
 * its maximum age, is rolled back by the sweeper. How each transaction ended is remembered, so later
 * calls on its id are told: expired, rolled back by the gateway and why (its connection was lost),
 * rolled back by the database at COMMIT, committed, or committed with an unknown outcome.
 */
import { randomUUID } from "node:crypto";
import type { ResultCache } from "../cache/result-cache.js";
import type { ErrorCode } from "../../schemas/errors.js";
import type { BeginRequest } from "../../schemas/query.js";
import type { GatewayConfig } from "../config/schema.js";
import type { StatementResult } from "../engines/engine.js";
import { GatewayError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { Clock, Timer } from "../clock.js";
import type { Router } from "../routing/router.js";
import type { Pool } from "../pool/pool.js";
import type { PoolEntry } from "../pool/pool-entry.js";
import type { Endpoint } from "../topology/endpoint.js";
import { type CommitKey, keyedCommit, recordBeforeCommit, settleCommit } from "../idempotency/keyed-commit.js";
import type { KeyedWork, RecordedAnswer } from "../idempotency/keyed-work.js";
import type { IdempotencyStore } from "../idempotency/store.js";
import { commitFailure, EndedTransactions, UNKNOWN_OUTCOME } from "./ended-transactions.js";
import { meaningOf, outcomeOf, outcomeUnknown, readOnlyFailure, sessionLost } from "./failure.js";
import { type Attempts, instanceIsReadOnly, type Lease } from "./attempt.js";
import type { Plan, Planner } from "./plan.js";
import { type RunAs, UNRESTRICTED } from "./run-as.js";

interface OpenTransaction {
  readonly id: string;
  readonly endpoint: Endpoint;
  readonly pool: Pool;
  readonly entry: PoolEntry;
  readonly readOnly: boolean;
  /** The principal that began it: the only one that may use it. */
  readonly tenant: string;
  /** Began by a read-only principal: its statements are checked, and it ends in ROLLBACK whatever is asked. */
  readonly readOnlyPrincipal: boolean;
  readonly expiresAt: number;
  readonly idleTimeoutMs: number;
  readonly maxAgeMs: number;
  lastUsedAt: number;
  busy: boolean;
  /** Callers queued for their turn (in arrival order), when the transaction queues instead of refusing. */
  readonly turns: (() => void)[];
}

/** Per-transaction lifetimes (the Data API's 3 minutes idle / 24 hours), instead of the configured ones. */
export interface TransactionLifetimes {
  idleTimeoutMs: number;
  maxAgeMs: number;
}

/** What a COMMIT answers: the consistency token of a read-write transaction, and a keyed commit's recorded answer. */
export interface CommitOutcome {
  consistencyToken: string | undefined;
  recorded?: RecordedAnswer | undefined;
}

export interface TurnOptions {
  /** Wait for a statement already running on the transaction instead of answering TRANSACTION_BUSY. */
  queue?: boolean;
}

export class TransactionRegistry {
  private readonly open = new Map<string, OpenTransaction>();
  /** How transactions that are no longer open ended, for the answer to later calls on them. */
  private readonly ended = new EndedTransactions();
  private sweepTimer: Timer | undefined;
  private closing = false;
  /** Begins under way (counted against maxOpen before they finish). */
  private opening = 0;

  constructor(
    private readonly router: Router,
    private readonly attempts: Attempts,
    private readonly planner: Planner,
    private readonly config: GatewayConfig,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** The cluster's idempotency record, for keyed commits. */
    private readonly keys: IdempotencyStore,
    /** Told of every COMMIT (gateway/cache/). */
    private readonly cache: ResultCache,
    /** Makes transaction ids (ids naming this task when peers share a key). */
    private readonly mintId: () => string = randomUUID,
  ) {}

  /** Whether this registry issued the id (open, or expired recently). */
  knows(id: string): boolean {
    return this.open.has(id) || this.ended.has(id);
  }

  get size(): number {
    return this.open.size;
  }

  start(): void {
    const interval = Math.max(50, Math.min(1000, this.config.transactions.idleTimeoutMs / 4));
    this.sweepTimer = this.clock.every(interval, () => this.sweep());
  }

  async begin(request: BeginRequest, lifetimes?: TransactionLifetimes, runAs: RunAs = UNRESTRICTED): Promise<{ id: string; expiresAt: Date }> {
    if (this.closing) throw new GatewayError("GATEWAY_DRAINING", "the gateway is shutting down; no new transactions");
    const { maxOpen } = this.config.transactions;
    const maxAgeMs = lifetimes?.maxAgeMs ?? this.config.transactions.maxAgeMs;
    const idleTimeoutMs = lifetimes?.idleTimeoutMs ?? this.config.transactions.idleTimeoutMs;
    if (this.open.size + this.opening >= maxOpen) {
      throw new GatewayError(
        "TOO_MANY_TRANSACTIONS",
        `${this.open.size} interactive transactions are open (transactions.maxOpen=${maxOpen})`,
      );
    }
    // Read-only transactions may run on a fresh-enough replica; the rest pin a primary connection.
    const timeoutMs = this.config.statements.defaultTimeoutMs;
    const readOnly = (request.readOnly ?? false) || runAs.readOnly;
    this.opening++;
    let lease: Lease;
    try {
      lease = await this.attempts.acquire(this.planner.route(readOnly ? "read" : "write", request, timeoutMs), runAs);
      const { endpoint, pool, entry } = lease;
      try {
        this.refuseOverTransactionShare(pool, endpoint, runAs);
        await entry.connection.begin({ isolation: request.isolation, readOnly, lockReadOnly: runAs.readOnly }, timeoutMs);
      } catch (err) {
        this.attempts.release(lease);
        // BEGIN applies nothing: a session lost during it is simply lost.
        const outcome = outcomeOf(err, { unit: "begin", intent: readOnly ? "read" : "write", endpoint: endpoint.name, onReplica: endpoint.role === "replica" });
        if (outcome.failoverSign) this.router.signalFailover(`${endpoint.name}: ${(err as Error).message}`, endpoint);
        throw outcome.error;
      }
    } finally {
      this.opening--;
    }
    const now = this.clock.now();
    const id = this.mintId();
    this.open.set(id, {
      id,
      endpoint: lease.endpoint,
      pool: lease.pool,
      entry: lease.entry,
      readOnly,
      tenant: runAs.tenant,
      readOnlyPrincipal: runAs.readOnly,
      expiresAt: now + maxAgeMs,
      idleTimeoutMs,
      maxAgeMs,
      lastUsedAt: now,
      busy: false,
      turns: [],
    });
    return { id, expiresAt: new Date(this.clock.wallNow() + maxAgeMs) };
  }

  /**
   * Runs a plan's statements on the transaction's connection, in one turn (nothing else of the
   * transaction runs in between). With `transactionEnds: "continue"` (the Data API), a statement that
   * ended the transaction (MySQL DDL's implicit commit, a COMMIT or ROLLBACK sent as SQL) is followed by
   * a new transaction on the same session at once: the id stays valid, later statements run in a
   * transaction, and CommitTransaction or RollbackTransaction ends that one, as on the service.
   */
  async run(id: string, plan: Plan, turn: TurnOptions = {}): Promise<StatementResult[]> {
    const runAs = plan.runAs;
    const options = plan.options;
    const tx = await this.claim(id, turn, runAs);
    // Query insights: the wait for the transaction's turn is not the database's time.
    const claimedAt = plan.timing === undefined ? 0 : this.clock.now();
    try {
      const result: StatementResult[] = [];
      for (const statement of plan.statements) {
        const answer = await tx.entry.connection.execute(statement, options).catch(async (err: unknown) => {
          if (!tx.readOnlyPrincipal) throw err;
          const refusal = readOnlyFailure(err);
          if (meaningOf(refusal).kind === "access") {
            // A refused write may have taken its table's lock before the refusal (PostgreSQL locks
            // while planning, then checks the grants): the transaction ends now, not when the
            // caller gets round to it.
            await tx.entry.connection.rollback(options.timeoutMs).catch(() => undefined);
            this.end(tx, "TRANSACTION_ABORTED", `transaction ${id} was rolled back by the gateway: the database refused a write of this read-only principal`);
            const { message, database } = refusal as GatewayError;
            throw new GatewayError("FORBIDDEN", `${message}; transaction ${id} was rolled back and closed`, { cause: err, database });
          }
          throw refusal;
        });
        result.push(answer);
        if (plan.transactionEnds === "continue" && !tx.readOnlyPrincipal && !tx.entry.connection.inTransaction) {
          await tx.entry.connection.begin({}, options.timeoutMs);
        }
        if (statement.analysis.explicitCommit === true && answer.command === "ROLLBACK") {
          // PostgreSQL turns COMMIT in a transaction an earlier statement failed in into a rollback,
          // without an error: never answered as if it committed.
          throw new GatewayError(
            "TRANSACTION_ABORTED",
            `COMMIT rolled the transaction back: an earlier statement in it had failed, so nothing of it was committed; run it again from the start`,
          );
        }
      }
      if (tx.readOnlyPrincipal && !tx.entry.connection.inTransaction) {
        this.end(tx, "TRANSACTION_ABORTED", `transaction ${id} was closed by the gateway: a statement ended it, which a read-only principal may not do`);
        throw new GatewayError("FORBIDDEN", `this principal may only read: the statement ended transaction ${id}, which is closed`);
      }
      return result;
    } catch (err) {
      const instanceReadOnly =
        !tx.readOnly && err instanceof GatewayError && err.refusedAsReadOnly && (await instanceIsReadOnly(tx.entry.connection, this.config.topology.checkTimeoutMs, false));
      const outcome = outcomeOf(err, {
        unit: "transaction",
        intent: tx.readOnly ? "read" : "write",
        endpoint: tx.endpoint.name,
        onReplica: tx.endpoint.role === "replica",
        instanceReadOnly,
        transaction: id,
      });
      if (outcome.failoverSign) this.router.signalFailover(`transaction ${id}: ${(err as Error).message}`, tx.endpoint);
      if (sessionLost(err)) {
        this.end(tx, "TRANSACTION_ABORTED", `transaction ${id} was rolled back: it lost its connection (${(err as Error).message}); nothing was committed: run it again from the start`);
      }
      throw outcome.error;
    } finally {
      tx.lastUsedAt = this.clock.now();
      if (plan.timing !== undefined) plan.timing.databaseMs += tx.lastUsedAt - claimedAt;
      this.passTurn(tx);
    }
  }

  /**
   * Commits; resolves the consistency token of a read-write transaction. With a key (not for a
   * read-only principal, whose transaction commits nothing), the key and the commit's answer are
   * recorded in the transaction before COMMIT, and a commit of a transaction no longer open here is
   * settled from that record (keyed-commit.ts).
   */
  /** Commits; the result cache is told (its generations moved on) before the answer, whatever the outcome. */
  commit(id: string, turn: TurnOptions = {}, runAs: RunAs = UNRESTRICTED, key?: CommitKey): Promise<CommitOutcome> {
    return runAs.readOnly ? this.commitOnce(id, turn, runAs, key) : this.cache.afterCommit(this.commitOnce(id, turn, runAs, key));
  }

  private async commitOnce(id: string, turn: TurnOptions, runAs: RunAs, key: CommitKey | undefined): Promise<CommitOutcome> {
    const timeoutMs = this.config.statements.defaultTimeoutMs;
    const keyed = key === undefined || runAs.readOnly ? undefined : keyedCommit(key, id, runAs);
    if (keyed !== undefined && this.open.get(id)?.tenant !== runAs.tenant) return this.settle(id, keyed, runAs, timeoutMs);
    const tx = await this.claim(id, turn, runAs);
    // A READ ONLY transaction commits nothing: its key is accepted and ignored, as on a read.
    if (keyed !== undefined && !tx.readOnlyPrincipal && !tx.readOnly) await this.recordKey(tx, keyed, timeoutMs);
    // What later calls on the id are told, unless the COMMIT fails in a way that says more.
    let fate: [ErrorCode, string] = ["TRANSACTION_NOT_FOUND", `transaction ${id} was committed`];
    try {
      if (tx.readOnlyPrincipal) {
        // Nothing of a read-only principal's transaction may persist: it ends in ROLLBACK either way.
        fate = ["TRANSACTION_NOT_FOUND", `transaction ${id} was ended (a read-only principal's transaction always ends in ROLLBACK)`];
        await tx.entry.connection.rollback(timeoutMs);
        return { consistencyToken: undefined };
      }
      const connection = tx.entry.connection;
      // A READ ONLY transaction committed nothing: it answers no token.
      const committing = tx.readOnly ? connection.commit(timeoutMs).then((ended) => ({ ended, position: null })) : connection.commitWithPosition(timeoutMs);
      const { ended, position } = await committing.catch((err: unknown) => {
        const failure = commitFailure(id, err);
        fate = failure.fate;
        if (keyed !== undefined && outcomeUnknown(failure.error)) {
          throw new GatewayError("OUTCOME_UNKNOWN", `${(failure.error as Error).message}; send the commit again with the same idempotency key to learn whether it committed`, { cause: err });
        }
        throw failure.error;
      });
      if (ended === "rolled back") {
        fate = ["TRANSACTION_ABORTED", `transaction ${id} was rolled back by the database at COMMIT (a statement in it had failed): run it again from the start`];
        throw new GatewayError("TRANSACTION_ABORTED", `transaction ${id} had a failed statement; the database rolled it back`);
      }
      // Committed: a token that cannot be read is left out rather than reported as a failure.
      const consistencyToken = position ?? undefined;
      return { consistencyToken, recorded: keyed === undefined || tx.readOnly ? undefined : { answer: keyed.answer([]), replayed: false } };
    } finally {
      this.end(tx, ...fate);
    }
  }

  /**
   * Records the commit's key in the transaction. A key used for another request is refused and the
   * transaction stays open (on PostgreSQL a failed insert would have ended it: the key is looked up
   * first); a lost session ends it, with nothing committed.
   */
  private async recordKey(tx: OpenTransaction, keyed: KeyedWork, timeoutMs: number): Promise<void> {
    try {
      await this.keys.ensureTable(timeoutMs);
      await recordBeforeCommit(tx.entry.connection, this.keys, keyed, timeoutMs);
    } catch (err) {
      if (sessionLost(err)) {
        this.end(tx, "TRANSACTION_ABORTED", `transaction ${tx.id} was rolled back: it lost its connection before COMMIT; run it again from the start`);
        throw new GatewayError("CONNECTION_LOST", `transaction ${tx.id} lost its connection before COMMIT was sent; nothing was committed: run the whole transaction again`, { cause: err });
      }
      tx.lastUsedAt = this.clock.now();
      this.passTurn(tx);
      throw err;
    }
  }

  /**
   * A keyed commit of a transaction that is not open here: the recorded answer when it committed,
   * else what the registry knows of it (or TRANSACTION_NOT_FOUND: it did not commit).
   */
  private async settle(id: string, keyed: KeyedWork, runAs: RunAs, timeoutMs: number): Promise<CommitOutcome> {
    await this.keys.ensureTable(timeoutMs);
    const route = this.planner.route("write", {}, timeoutMs);
    const recorded = await this.attempts.once(await this.router.primary(route.deadline), "write", runAs, route.deadline, (connection) =>
      settleCommit(connection, this.keys, keyed, timeoutMs),
    );
    if (recorded !== undefined) return { consistencyToken: undefined, recorded };
    // What this task remembers is the answer, except an unknown outcome, which the record has just settled.
    const fate = this.ended.answerFor(id, runAs.tenant);
    if (fate !== undefined && !fate.message.includes(UNKNOWN_OUTCOME)) throw fate;
    throw new GatewayError("TRANSACTION_NOT_FOUND", `transaction ${id} is not open and did not commit: nothing is recorded under this idempotency key; run the transaction again from the start`);
  }

  async rollback(id: string, turn: TurnOptions = {}, runAs: RunAs = UNRESTRICTED): Promise<void> {
    const tx = await this.claim(id, turn, runAs);
    try {
      await tx.entry.connection.rollback(this.config.statements.defaultTimeoutMs);
    } catch (err) {
      // The session may be gone; either way nothing of the transaction remains.
      if (!sessionLost(err)) throw err;
    } finally {
      this.end(tx, "TRANSACTION_NOT_FOUND", `transaction ${id} was rolled back by its caller`);
    }
  }

  /** The open transaction, if `tenant` began it: another principal is told it does not exist. */
  private lookup(id: string, tenant: string): OpenTransaction {
    const tx = this.open.get(id);
    if (!tx || tx.tenant !== tenant) {
      const fate = tx ? undefined : this.ended.answerFor(id, tenant);
      if (fate) throw fate;
      throw new GatewayError("TRANSACTION_NOT_FOUND", `no open transaction ${id} (unknown, committed or rolled back)`);
    }
    return tx;
  }

  /** The transaction for one statement: at once, in turn behind the running one, or TRANSACTION_BUSY. */
  private async claim(id: string, turn: TurnOptions, runAs: RunAs): Promise<OpenTransaction> {
    const tx = this.lookup(id, runAs.tenant);
    if (!tx.busy) {
      tx.busy = true;
      return tx;
    }
    if (!turn.queue) throw new GatewayError("TRANSACTION_BUSY", `transaction ${id} is running another statement`);
    await new Promise<void>((resolve) => tx.turns.push(resolve));
    // Woken by passTurn (still busy, now ours) or by the transaction's end.
    if (this.open.get(id) !== tx) {
      this.passTurn(tx);
      return this.lookup(id, runAs.tenant);
    }
    return tx;
  }

  /** Hands the transaction to the next queued caller, or marks it free. */
  private passTurn(tx: OpenTransaction): void {
    const next = tx.turns.shift();
    if (next) next();
    else tx.busy = false;
  }

  /**
   * Forgets the transaction and returns its connection (the pool rolls back anything left open);
   * later calls on its id get `code` and `message`.
   */
  private end(tx: OpenTransaction, code: ErrorCode, message: string): void {
    if (this.open.get(tx.id) !== tx) return;
    this.open.delete(tx.id);
    this.ended.remember(tx.id, tx.tenant, code, message);
    // Queued callers wake to find it gone.
    for (const wake of tx.turns.splice(0)) wake();
    this.attempts.release(tx);
  }

  /**
   * One principal's open transactions may pin at most its transaction share of a pool, so that the
   * statements of everyone else (its own autocommit work included) keep connections to run on.
   */
  private refuseOverTransactionShare(pool: Pool, endpoint: Endpoint, runAs: RunAs): void {
    const cap = Math.max(1, Math.floor(runAs.transactionShare * pool.settings.maxSize + 1e-9));
    let pinned = 0;
    for (const tx of this.open.values()) if (tx.pool === pool && tx.tenant === runAs.tenant) pinned++;
    if (pinned < cap) return;
    throw new GatewayError(
      "TOO_MANY_TRANSACTIONS",
      `this principal's ${pinned} open interactive transactions already pin its share of ${endpoint.name}'s pool (${cap} of ${pool.settings.maxSize}, maxTransactionShare); commit or roll one back first`,
    );
  }

  private expire(tx: OpenTransaction, reason: string): void {
    this.logger.info({ transactionId: tx.id, reason }, "transaction rolled back by the gateway");
    this.end(tx, "TRANSACTION_EXPIRED", `transaction ${tx.id} was rolled back by the gateway: ${reason}`);
  }

  /** Rolls back transactions past their idle timeout or maximum age. Tests call it directly. */
  sweep(): void {
    const now = this.clock.now();
    for (const tx of [...this.open.values()]) {
      if (tx.busy) continue;
      if (now >= tx.expiresAt) this.expire(tx, `maximum age of ${tx.maxAgeMs}ms reached`);
      else if (now - tx.lastUsedAt >= tx.idleTimeoutMs) this.expire(tx, `idle for more than ${tx.idleTimeoutMs}ms`);
    }
  }

  /** For shutdown: refuse new transactions and roll back every open one that is not mid-statement. */
  closeAll(): void {
    this.closing = true;
    this.sweepTimer?.cancel();
    for (const tx of [...this.open.values()]) {
      if (!tx.busy) this.expire(tx, "the gateway is shutting down");
    }
  }
}
