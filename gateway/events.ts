/**
 * What the gateway's parts tell anyone who listens: typed events with any number of listeners. Each
 * component is given the hub at construction and emits; observability (metrics) and the cluster's own
 * reactions (discovery on a failover sign, re-checking sessions on a role change) subscribe like anyone
 * else. No component sets another's callback. A listener that throws is logged, never thrown into the
 * component that emitted.
 */
import type { ErrorCode } from "../schemas/errors.js";
import type { Logger } from "./logger.js";

/**
 * Every event and its payload. The events of a part whose payloads are its own types are declared in
 * that part and merged in here (TypeScript declaration merging, as fastify's plugins add to
 * FastifyInstance): the topology's in topology/topology-events.ts. The hub imports none of them, so
 * every part may import the hub without a circle.
 */
export interface GatewayEventMap {
  /** Work was run again after a failure with this code. */
  retry: { cluster: string; code: ErrorCode };
  /** A read that asked for the result cache: how it was answered, and why it did not use the cache (bypass). */
  cacheRead: { cluster: string; outcome: CacheOutcome; reason?: string | undefined };
  /** A write moved the cache's generations on (confirmed), or could not (the store stops vouching until its epoch moves on). */
  cacheInvalidation: { cluster: string; confirmed: boolean };
  /** Work answered (told only while query insights are on): whose, which texts, where its time went, how it ended. */
  workRun: WorkRun;
}

/** One request's work as query insights count it. */
export interface WorkRun {
  cluster: string;
  /** The principal (the pool tenant; "" when callers are not told apart). */
  principal: string;
  /** The texts run, in order (one, or a batch's). */
  statements: readonly string[];
  /** From planning to the answer. */
  totalMs: number;
  /** Of that, the time on a session (the rest waited: routing, a failover hold, the pool, retries' backoff). */
  databaseMs: number;
  /** Rows returned or changed, over its statements. */
  rows: number;
  /** The failure's registry code, with the database's SQLSTATE for DATABASE_ERROR ("DATABASE_ERROR/42P01"); undefined on success. */
  error: string | undefined;
}

/** How a read that asked for the cache was answered (the `cache` field of its answer). */
export type CacheOutcome = "hit" | "miss" | "stale" | "bypass";

export type GatewayEventName = keyof GatewayEventMap;
type Listener<K extends GatewayEventName> = (payload: GatewayEventMap[K]) => void;

export class GatewayEvents {
  private readonly listeners: { [K in GatewayEventName]?: Listener<K>[] } = {};

  constructor(private readonly logger?: Logger) {}

  /** Adds a listener; returns the function that removes it. */
  on<K extends GatewayEventName>(event: K, listener: Listener<K>): () => void {
    const list = (this.listeners[event] ??= []) as Listener<K>[];
    list.push(listener);
    return () => {
      const at = list.indexOf(listener);
      if (at >= 0) list.splice(at, 1);
    };
  }

  emit<K extends GatewayEventName>(event: K, payload: GatewayEventMap[K]): void {
    const list = this.listeners[event];
    if (list === undefined) return;
    for (const listener of list) {
      try {
        listener(payload);
      } catch (err) {
        this.logger?.error({ event, err }, "an event listener failed");
      }
    }
  }
}

/** One cluster's view of the hub: its components emit without knowing the cluster's name. */
export interface ClusterEvents {
  emit<K extends GatewayEventName>(event: K, payload: Omit<GatewayEventMap[K], "cluster">): void;
}

export function clusterEvents(events: GatewayEvents, cluster: string): ClusterEvents {
  return {
    emit: (event, payload) => events.emit(event, Object.assign({}, payload, { cluster }) as GatewayEventMap[typeof event]),
  };
}

/** For components built on their own (tests, tools): events that nobody hears. */
export const UNHEARD: ClusterEvents = { emit: () => undefined };
