/** A pooled connection and its bookkeeping. States follow HikariCP's vocabulary. */
import type { EngineConnection } from "../engines/engine.js";

/** Decides whether a connection may still be used (its endpoint changed role); false retires it. */
export type ConnectionVerifier = (connection: EngineConnection, timeoutMs: number) => Promise<boolean>;

export type EntryState =
  /** In the idle stack, ready to be handed out. */
  | "NOT_IN_USE"
  /** Lent to a caller. */
  | "IN_USE"
  /** Held by the pool itself: being validated, pinged or reset. */
  | "RESERVED"
  /** Closed or closing; never handed out again. */
  | "REMOVED";

export class PoolEntry {
  state: EntryState = "RESERVED";
  /** Last time the entry went idle or was proven alive. */
  lastAccessedAt: number;
  /** Set when the entry must be retired when its borrower releases it (lifetime reached, death). */
  retireOnRelease: string | null = null;
  /** Set when the session must be verified before it is used again (its endpoint changed role). */
  verifyBeforeUse: { verify: ConnectionVerifier; reason: string } | null = null;
  /** The tenant the entry is lent to (meaningful while IN_USE). */
  tenant = "";
  /**
   * The tenant whose work may have left something in the session, or undefined for a session in its
   * just-connected state. Another tenant gets it only after a full reset.
   */
  lastTenant: string | undefined = undefined;

  constructor(
    readonly connection: EngineConnection,
    readonly createdAt: number,
    /** Max lifetime minus this entry's jitter; Infinity when lifetimes are off. */
    readonly expiresAt: number,
  ) {
    this.lastAccessedAt = createdAt;
  }
}
