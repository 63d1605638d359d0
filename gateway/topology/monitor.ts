/**
 * Watches every endpoint of a cluster (connect, role, replication position) on an interval, over its
 * own connections, with timeouts. Decides which endpoint is the primary, estimates replica lag, bans
 * lagging replicas, and follows failovers: a failover signal (lost primary, read-only write) triggers
 * checks at once and then at a fast cadence until a primary answers; writes wait for that moment.
 * Each primary holds a lease (an AbortSignal) for its term: callers queued on its pool for primary
 * work give up the moment the term ends, instead of waiting out the pool's timeout there.
 */
import { setMaxListeners } from "node:events";
import { appliedThroughAt, replicaLagMs } from "./lag.js";
import type { Engine, EngineConnection, InstanceState } from "../engines/engine.js";
import { GatewayError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { Clock, Timer } from "../clock.js";
import { type ClusterEvents, UNHEARD } from "../events.js";
import type { Endpoint } from "./endpoint.js";
import type { EndpointRecord } from "./endpoint-record.js";
import type { Topology } from "./topology.js";

export interface MonitorSettings {
  checkIntervalMs: number;
  checkTimeoutMs: number;
  maxReplicaLagMs: number;
  /**
   * The monitor's session to an endpoint is replaced by a fresh connection once it is this old, so
   * that a DNS name that moved (Aurora's cluster and reader endpoints after a failover) is followed:
   * a kept session stays on the instance the name led to when it was opened. 0: never (only after a
   * failed check, or a writer name that stopped reaching the primary).
   */
  reresolveIntervalMs?: number | undefined;
}

export interface FailoverRecord {
  startedAt: string;
  reason: string;
  oldPrimary: string | undefined;
  newPrimary: string | undefined;
  resolvedAt: string | undefined;
  durationMs: number | undefined;
  timeline: { at: string; event: string }[];
}

/** While no primary is known, endpoints are checked this often. */
const FAILOVER_CHECK_INTERVAL_MS = 50;
const PRIMARY_HISTORY = 600;

export class TopologyMonitor implements Topology {
  private readonly connections = new Map<EndpointRecord, EngineConnection>();
  /** When each of the monitor's sessions was opened (gateway clock), for re-resolving names. */
  private readonly openedAt = new Map<EngineConnection, number>();
  /** The last role seen of each instance, by the server id it gives itself (Aurora), whatever name led there. */
  private readonly instanceRoles = new Map<string, "primary" | "replica">();
  private timer: Timer | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  /** At rest (rest()): no sessions, no checks; what was last seen stands until wake(). */
  private resting = false;
  private currentPrimary: EndpointRecord | undefined;
  /** The current primary's term: aborted when it ends (failover, another primary chosen). */
  private lease = newLease();
  private failoverStartedAt: number | undefined;
  private primaryWaiters: (() => void)[] = [];
  /** The primary's positions at recent checks, oldest first, for the lag estimate. */
  private primaryHistory: { at: number; position: string }[] = [];
  private roundsStarted = 0;
  private refusalLogged = false;
  /** The first check round that started after the current failover began. */
  private failoverFirstRound = 0;
  /** The one check of the primary a failover sign asks for, while it runs (later signs wait on it). */
  private confirming: Promise<void> | undefined;
  readonly failovers: FailoverRecord[] = [];

  constructor(
    readonly endpoints: readonly EndpointRecord[],
    private readonly engine: Engine,
    private readonly settings: MonitorSettings,
    private readonly logger: Logger,
    private readonly clock: Clock,
    /**
     * Where the monitor tells of failover signs, role changes, bans and resolved failovers (the cluster
     * runs discovery and re-checks sessions; the metrics count).
     */
    private readonly events: ClusterEvents = UNHEARD,
  ) {}

  /** Checks every endpoint once (resolves when done) and keeps checking on the interval. */
  async start(): Promise<void> {
    await this.checkAll();
    this.schedule();
  }

  primary(): EndpointRecord | undefined {
    return this.currentPrimary;
  }

  /** The last role the monitor saw of the instance with this server id (Aurora), or undefined. */
  roleOfInstance(serverId: string): "primary" | "replica" | undefined {
    return this.instanceRoles.get(serverId);
  }

  /** Replicas that may serve reads now. */
  readReplicas(): EndpointRecord[] {
    return this.endpoints.filter((endpoint) => endpoint.servesReads);
  }

  /** Resolves with the primary as soon as one is known, or undefined at the deadline (clock ms). */
  async waitForPrimary(deadline: number): Promise<EndpointRecord | undefined> {
    while (!this.currentPrimary && !this.closed) {
      const remaining = deadline - this.clock.now();
      if (remaining <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const wake = () => {
          timer.cancel();
          resolve();
        };
        const timer = this.clock.after(remaining, () => {
          // A waiter that gives up leaves the list, so a long outage does not grow it.
          this.primaryWaiters = this.primaryWaiters.filter((waiter) => waiter !== wake);
          resolve();
        });
        this.primaryWaiters.push(wake);
      });
    }
    return this.currentPrimary;
  }

  primaryLease(endpoint: Endpoint): AbortSignal {
    if (endpoint === this.currentPrimary) return this.lease.signal;
    return AbortSignal.abort(notThePrimary(endpoint));
  }

  /**
   * Something suggests the primary is gone or demoted: check it once, and if it does not answer as
   * the primary, stop trusting it and look again at every endpoint. A lost session alone (an
   * administrator's KILL, a statement that ended its own session, a network blip) says nothing of a
   * primary that still answers, and must not be recorded as a failover to itself. A sign about an
   * endpoint that is not the primary any more (a late error from the old one, after the new one was
   * found) only makes the monitor look again: it must not undo the failover that happened.
   */
  signalFailover(reason: string, about?: Endpoint): void {
    if (this.closed || this.resting) return;
    if (about !== undefined && this.currentPrimary !== undefined && about !== this.currentPrimary) {
      this.logger.debug({ reason, about: about.name, primary: this.currentPrimary.name }, "failover sign about a former primary: checking, not failing over");
      void this.checkAll();
      return;
    }
    this.events.emit("failoverSignal", { reason });
    const suspect = this.currentPrimary;
    if (this.failoverStartedAt !== undefined || suspect === undefined) return this.lookAgain(reason);
    // The sign is about lost or refused sessions: the kept session may be one of them, half-dead and
    // silent until the check's limit. A fresh one answers at once whether the primary is still there.
    if (this.confirming === undefined) this.dropConnection(suspect);
    this.confirming ??= this.confirm(suspect).then(() => {
      this.confirming = undefined;
      // A round may have decided meanwhile (another primary, or a failover under way).
      if (this.closed || this.currentPrimary !== suspect || this.failoverStartedAt !== undefined) return;
      if (suspect.healthy && suspect.role === "primary") {
        this.logger.info({ reason, primary: suspect.name }, "failover sign, but the primary still answers as the primary: no failover");
        return;
      }
      this.lookAgain(reason);
    });
  }

  /** The primary is not to be trusted: a failover begins (unless one is under way) and every endpoint is checked again. */
  private lookAgain(reason: string): void {
    if (this.failoverStartedAt === undefined) this.beginFailover(reason);
    // A round already under way started before this sign and cannot answer it: queue a fresh one.
    void (this.running ?? Promise.resolve()).then(() => this.checkAll());
  }

  /**
   * Closes the monitor's sessions and stops checking, so that the database may pause (idle to zero):
   * the roles, positions and primary last seen stand meanwhile; failover signs and refreshes wait for
   * wake(). Only the cluster's idle policy calls it, with a primary known.
   */
  rest(): void {
    if (this.closed || this.resting) return;
    this.resting = true;
    this.timer?.cancel();
    this.timer = undefined;
    for (const connection of this.connections.values()) void connection.close().catch(() => connection.destroy());
    this.connections.clear();
  }

  /** Checks again at once and then on the interval (the database answers again). */
  wake(): void {
    if (this.closed || !this.resting) return;
    this.resting = false;
    void this.checkAll().finally(() => this.schedule());
  }

  get atRest(): boolean {
    return this.resting;
  }

  /** Checks every endpoint now (joins a check already running); nothing while at rest. */
  checkAll(): Promise<void> {
    if (this.resting) return Promise.resolve();
    this.running ??= this.runChecks(++this.roundsStarted).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private schedule(): void {
    if (this.closed || this.resting) return;
    // One chain of checks: a round that began before a rest and ends after the wake schedules too.
    this.timer?.cancel();
    const interval = this.currentPrimary ? this.settings.checkIntervalMs : Math.min(this.settings.checkIntervalMs, FAILOVER_CHECK_INTERVAL_MS);
    this.timer = this.clock.after(interval, () => void this.checkAll().finally(() => this.schedule()), { keepAlive: false });
  }

  private async runChecks(round: number): Promise<void> {
    // A round that began before the current failover saw the old world: it must not end the failover.
    const current = () => this.failoverStartedAt === undefined || round >= this.failoverFirstRound;
    const primary = this.currentPrimary;
    await Promise.all(
      this.endpoints.map(async (endpoint) => {
        await (endpoint === primary ? this.confirm(endpoint) : this.check(endpoint));
        // During a failover the first primary found ends it at once: the round's slowest check (a
        // silent former primary, cut only at checkTimeoutMs) must not hold the writes up. Only when no
        // other endpoint still claims the role from an earlier round (the preferred writer might).
        if (this.failoverStartedAt !== undefined && current() && !this.resting && endpoint.healthy && endpoint.role === "primary" && this.soleClaimant(endpoint)) this.decide();
      }),
    );
    // A round cut short by rest() (its sessions closed under it) saw nothing about the database.
    if (current() && !this.resting) this.decide();
  }

  /**
   * Checks the primary, and once more on a fresh session when that check failed: one missed answer
   * (a session cut by a proxy or an administrator; this process stalled longer than checkTimeoutMs
   * on a loaded machine, so that the limit fired before the answer waiting in its socket was read)
   * says nothing of a primary that answers the next question, and must not be recorded as a
   * failover. A primary that answers as a replica was demoted: that answer needs no second asking.
   */
  private async confirm(primary: EndpointRecord): Promise<void> {
    await this.check(primary);
    if (primary.healthy || this.closed) return;
    const missed = primary.lastError;
    await this.check(primary);
    if (primary.healthy && primary.role === "primary") this.logger.info({ primary: primary.name, missed }, "the primary missed a check and answered the next: no failover");
  }

  private soleClaimant(endpoint: EndpointRecord): boolean {
    return !endpoint.spreadsOverInstances && this.endpoints.every((other) => other === endpoint || other.spreadsOverInstances || !(other.healthy && other.role === "primary"));
  }

  private async check(endpoint: EndpointRecord): Promise<void> {
    const { checkTimeoutMs } = this.settings;
    try {
      let connection = this.connections.get(endpoint);
      if (connection?.alive && this.dueForReresolve(connection)) connection = await this.reresolve(endpoint, connection);
      if (!connection || !connection.alive) {
        connection = await this.engine.connect({ url: endpoint.url, purpose: "monitor" }, checkTimeoutMs);
        if (this.closed || this.resting || !this.endpoints.includes(endpoint)) {
          // Closed or forgotten while connecting: keep nothing.
          connection.destroy();
          return;
        }
        this.connections.set(endpoint, connection);
        this.openedAt.set(connection, this.clock.now());
      }
      // A silent instance (network black hole, a frozen server) must not hold the round up: at the
      // limit the check fails and the session is cut, whether or not the driver notices at once.
      const startedAt = this.clock.now();
      const state = await withinLimit(this.clock, connection, connection.inspect(checkTimeoutMs), checkTimeoutMs);
      const previous = endpoint.role;
      endpoint.role = state.role;
      if (previous !== state.role) this.events.emit("roleChange", { endpoint, previous });
      if (endpoint.configuredWriter && state.role !== "primary") {
        // The cluster name may be stale: reconnect next time so that a corrected name is followed.
        this.dropConnection(endpoint);
      }
      endpoint.checkStartedAt = startedAt;
      endpoint.position = this.positionOf(state);
      endpoint.reportedLagMs = state.replayAgeMs;
      endpoint.serverId = state.serverId ?? null;
      if (state.serverId !== undefined) this.noteInstanceRole(state.serverId, state.role);
      if (state.serverId !== undefined && state.role === "replica" && !endpoint.configuredWriter) endpoint.readerInstancesSeen.add(state.serverId);
      endpoint.readerPositions = state.readerPositions ?? null;
      this.noteRefusal(endpoint, state.positionsRefused);
      endpoint.healthy = true;
      endpoint.lastError = undefined;
    } catch (err) {
      this.dropConnection(endpoint);
      // rest() closed the session under this check: that says nothing about the endpoint.
      if (this.resting) return;
      endpoint.healthy = false;
      endpoint.role = "unknown";
      endpoint.lastError = this.engine.describeConnectError(err);
    }
  }

  /**
   * The position a check leaves on its endpoint until the round decides: the instance's own, else, for
   * a reader whose progress only the writer reports (Aurora), what the writer's last check reported of
   * it. The reader's own check has no position to give (it tells its lag only): the writer's
   * aurora_replica_status() reports each reader's last update time and lag
   * (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/aurora_replica_status.html). null
   * there would show, and route token reads by, "no position" from the reader's check to the end of
   * the round (decide()), though the writer reported one.
   */
  private positionOf(state: InstanceState): string | null {
    if (state.position !== null || state.role !== "replica" || state.serverId === undefined) return state.position;
    return this.currentPrimary?.readerPositions?.get(state.serverId) ?? null;
  }

  /** A kept session older than the re-resolve interval: the name it dialled is asked again. */
  private dueForReresolve(connection: EngineConnection): boolean {
    const interval = this.settings.reresolveIntervalMs ?? 0;
    if (interval <= 0) return false;
    return this.clock.now() - (this.openedAt.get(connection) ?? Number.NEGATIVE_INFINITY) >= interval;
  }

  /**
   * The name may lead elsewhere now (DNS moved): a fresh session through it replaces the kept one. A
   * fresh session that cannot be had or does not answer in time (a busy instance, a slow connect) says
   * nothing of the instance the kept one reaches: the kept one answers this check, and the name is
   * asked again next interval.
   */
  private async reresolve(endpoint: EndpointRecord, kept: EngineConnection): Promise<EngineConnection> {
    const { checkTimeoutMs } = this.settings;
    let fresh: EngineConnection | undefined;
    try {
      fresh = await this.engine.connect({ url: endpoint.url, purpose: "monitor" }, checkTimeoutMs);
      // Answers as a check would, or is not taken: a slow first answer must not fail the instance's check.
      await withinLimit(this.clock, fresh, fresh.inspect(checkTimeoutMs), checkTimeoutMs);
    } catch (err) {
      fresh?.destroy();
      this.logger.debug({ endpoint: endpoint.name, error: this.engine.describeConnectError(err) }, "topology: could not re-resolve the endpoint's name; the kept session answers");
      this.openedAt.set(kept, this.clock.now());
      return kept;
    }
    if (this.closed || !this.endpoints.includes(endpoint) || this.connections.get(endpoint) !== kept) {
      // Closed, forgotten or replaced meanwhile: keep nothing new.
      fresh.destroy();
      return this.connections.get(endpoint) ?? kept;
    }
    this.dropConnection(endpoint);
    this.connections.set(endpoint, fresh);
    this.openedAt.set(fresh, this.clock.now());
    return fresh;
  }

  private dropConnection(endpoint: EndpointRecord): void {
    const connection = this.connections.get(endpoint);
    if (connection === undefined) return;
    connection.destroy();
    this.connections.delete(endpoint);
    this.openedAt.delete(connection);
  }

  /**
   * An instance's role as its own check said it (Aurora's server id names it, whatever endpoint name
   * led there): a change is told, so that sessions that reach that instance through any name are
   * asked again before use (a promoted reader's sessions in a reader name's pool, say).
   */
  private noteInstanceRole(serverId: string, role: "primary" | "replica"): void {
    const previous = this.instanceRoles.get(serverId);
    this.instanceRoles.set(serverId, role);
    if (previous !== undefined && previous !== role) this.events.emit("instanceRoleChange", { serverId, role, previous });
  }

  /** A refused inspection is told as what it is, once per monitor (with its SQLSTATE), and kept for the status page. */
  private noteRefusal(endpoint: EndpointRecord, refusal: InstanceState["positionsRefused"]): void {
    endpoint.positionsRefused = refusal ?? null;
    if (refusal === undefined || this.refusalLogged) return;
    this.refusalLogged = true;
    this.logger.warn(
      { endpoint: endpoint.name, sqlstate: refusal.sqlstate, refusal: refusal.message },
      "topology: the server refused the replication position functions; positions come from the engine's own figures where it has them (Aurora), else replicas serve no bounded reads",
    );
  }

  /** Picks the primary, estimates lag against it, bans and unbans replicas, follows failovers. */
  private decide(): void {
    // A name spread over several readers (round-robin) that now and then leads to the writer is not the writer.
    const primaries = this.endpoints.filter((endpoint) => endpoint.healthy && endpoint.role === "primary" && !endpoint.spreadsOverInstances);
    // The configured writer first; else the primary already chosen, while it still answers as one (a
    // reader name that now and then leads to the writer, round-robin, must not take the role from it).
    const kept = this.currentPrimary !== undefined && primaries.includes(this.currentPrimary) ? this.currentPrimary : undefined;
    const primary = primaries.find((endpoint) => endpoint.configuredWriter) ?? kept ?? primaries[0];
    const now = this.clock.now();
    if (primary !== this.currentPrimary) this.primaryHistory = [];
    if (primary?.readerPositions) {
      // Where the writer reports its readers' progress (Aurora), that is their position.
      for (const endpoint of this.endpoints) {
        if (endpoint.role === "replica" && endpoint.serverId !== null) endpoint.position = primary.readerPositions.get(endpoint.serverId) ?? null;
      }
    }
    if (primary?.position) {
      // The check's start: every write that completed before it is at or before the position read.
      this.primaryHistory.push({ at: primary.checkStartedAt ?? now, position: primary.position });
      if (this.primaryHistory.length > PRIMARY_HISTORY) this.primaryHistory.shift();
      primary.lagMs = 0;
      primary.appliedThroughAt = null;
    }
    for (const endpoint of this.endpoints) {
      if (endpoint.role !== "replica" || !endpoint.healthy || !primary) continue;
      const compare = (a: string, b: string) => this.engine.comparePositions(a, b);
      endpoint.lagMs = replicaLagMs(endpoint, this.primaryHistory, compare, now);
      endpoint.appliedThroughAt = appliedThroughAt(endpoint, this.primaryHistory, compare);
      const tooFar = endpoint.lagMs > this.settings.maxReplicaLagMs;
      if (tooFar && endpoint.banReason === null) {
        endpoint.banReason = `replication lag ${Math.round(endpoint.lagMs)}ms > ${this.settings.maxReplicaLagMs}ms`;
        this.logger.warn({ endpoint: endpoint.name, reason: endpoint.banReason }, "replica banned");
        this.events.emit("replicaBanned", { endpoint, reason: endpoint.banReason });
      } else if (!tooFar && endpoint.banReason !== null) {
        this.logger.info({ endpoint: endpoint.name }, "replica unbanned");
        endpoint.banReason = null;
      }
    }
    this.setPrimary(primary);
  }

  private setPrimary(primary: EndpointRecord | undefined): void {
    const previous = this.currentPrimary;
    // Another endpoint that reaches the same instance (by its server id: the cluster name once it has
    // moved to the promoted reader's instance endpoint) is the same primary under another name: no failover.
    const sameInstance = previous !== undefined && primary !== undefined && previous.serverId !== null && previous.serverId === primary.serverId;
    if (previous && primary !== previous && this.failoverStartedAt === undefined && !sameInstance) {
      // The reason says what the last check saw of the old primary: a failed check's error, or the role it answered.
      const seen = previous.healthy ? `answered as ${previous.role}` : `check failed: ${previous.lastError ?? "no answer"}`;
      this.beginFailover(primary ? `primary moved to ${primary.name} (${previous.name} ${seen})` : `primary ${previous.name} unreachable or demoted (${seen})`);
    }
    this.changePrimary(primary);
    if (!primary) return;
    if (this.failoverStartedAt !== undefined) this.endFailover(primary);
    const waiters = this.primaryWaiters;
    this.primaryWaiters = [];
    for (const wake of waiters) wake();
  }

  private beginFailover(reason: string): void {
    this.failoverStartedAt = this.clock.now();
    this.failoverFirstRound = this.roundsStarted + 1;
    const oldPrimary = this.currentPrimary?.name;
    this.changePrimary(undefined);
    const at = new Date(this.clock.wallNow()).toISOString();
    this.failovers.push({ startedAt: at, reason, oldPrimary, newPrimary: undefined, resolvedAt: undefined, durationMs: undefined, timeline: [{ at, event: reason }] });
    if (this.failovers.length > 20) this.failovers.shift();
    this.logger.warn({ reason, oldPrimary }, "failover: writes wait for a primary");
  }

  /** Ends the current primary's term (its lease aborts) when another endpoint, or none, takes over. */
  private changePrimary(next: EndpointRecord | undefined): void {
    const previous = this.currentPrimary;
    if (next === previous) return;
    this.currentPrimary = next;
    if (previous) {
      this.lease.abort(notThePrimary(previous));
      this.lease = newLease();
    }
  }

  private endFailover(primary: EndpointRecord): void {
    const record = this.failovers[this.failovers.length - 1];
    const durationMs = this.clock.now() - (this.failoverStartedAt as number);
    this.failoverStartedAt = undefined;
    if (!record) return;
    record.newPrimary = primary.name;
    record.resolvedAt = new Date(this.clock.wallNow()).toISOString();
    record.durationMs = Math.round(durationMs);
    record.timeline.push({ at: record.resolvedAt, event: `primary is ${primary.name}` });
    this.logger.warn({ newPrimary: primary.name, durationMs: record.durationMs }, "failover: writes resumed");
    this.events.emit("failoverResolved", { record });
  }

  /** Drops the monitor's session to an endpoint that left the cluster. */
  forget(endpoint: EndpointRecord): void {
    this.dropConnection(endpoint);
  }

  close(): void {
    this.closed = true;
    this.lease.abort(new GatewayError("GATEWAY_DRAINING", "the gateway is shutting down"));
    this.timer?.cancel();
    for (const connection of this.connections.values()) connection.destroy();
    this.connections.clear();
    this.openedAt.clear();
    for (const wake of this.primaryWaiters) wake();
    this.primaryWaiters = [];
  }
}

/** Every caller queued on the primary's pool listens to the lease: no listener-count warning. */
function newLease(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

/** Why a caller queued for primary work on `endpoint` stopped waiting: nothing was sent there. */
function notThePrimary(endpoint: Endpoint): GatewayError {
  return new GatewayError("PRIMARY_UNAVAILABLE", `${endpoint.name} is no longer the primary; nothing was sent there`);
}

/** `work` on `session`, or a failure (and the session cut) once `limitMs` has passed. */
function withinLimit<T>(clock: Clock, session: EngineConnection, work: Promise<T>, limitMs: number): Promise<T> {
  let cut: Timer | undefined;
  const limit = new Promise<never>((_resolve, reject) => {
    cut = clock.after(limitMs, () => {
      session.destroy();
      reject(new Error(`no answer within ${limitMs}ms`));
    });
  });
  work.catch(() => undefined);
  return Promise.race([work, limit]).finally(() => cut?.cancel());
}
