/**
 * Callers waiting for a connection, served fairly across tenants (the principals behind them):
 * first-in first-out within a tenant, round-robin between tenants, so that one tenant with hundreds of
 * requests queued does not make another wait behind all of them. A tenant may be held back by the
 * pool (it already holds its share): the round-robin skips it until it is eligible again. Timed-out
 * waiters are removed lazily. With a single tenant this is exactly a FIFO.
 */
import type { GatewayError } from "../errors.js";
import type { PoolEntry } from "./pool-entry.js";

export interface Waiter {
  readonly enqueuedAt: number;
  /** Clock time at which the waiter gives up. */
  readonly deadline: number;
  /** Aborted when the caller no longer wants a connection (its endpoint stopped being the one to use). */
  readonly signal?: AbortSignal | undefined;
  /** Whose request this is; "" when callers are not told apart. */
  readonly tenant: string;
  /** Served, timed out or gone: its slot in the queue is skipped. */
  settled: boolean;
  resolve(entry: PoolEntry): void;
  reject(error: GatewayError): void;
}

/** One tenant's waiters in arrival order: O(1) push and shift, lazy removal. */
class TenantFifo {
  private items: (Waiter | null)[] = [];
  private head = 0;
  live = 0;

  push(waiter: Waiter): void {
    this.items.push(waiter);
    this.live++;
  }

  shift(): Waiter | undefined {
    while (this.head < this.items.length) {
      const waiter = this.items[this.head];
      this.items[this.head++] = null;
      if (waiter && !waiter.settled) {
        waiter.settled = true;
        this.live--;
        this.compact();
        return waiter;
      }
    }
    this.compact();
    return undefined;
  }

  /** The waiters still waiting, in arrival order. */
  *waiting(): Iterable<Waiter> {
    for (let i = this.head; i < this.items.length; i++) {
      const waiter = this.items[i];
      if (waiter && !waiter.settled) yield waiter;
    }
  }

  private compact(): void {
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}

/** Whether a tenant may be given a connection now. */
export type EligibleTenant = (tenant: string) => boolean;

const ANY: EligibleTenant = () => true;

export class WaiterQueue {
  /** Tenants with live waiters, in the order the round-robin visits them. */
  private readonly tenants = new Map<string, TenantFifo>();
  /** The tenant served last: the round-robin goes on after it. */
  private lastServed: string | undefined;
  private live = 0;

  get length(): number {
    return this.live;
  }

  push(waiter: Waiter): void {
    let fifo = this.tenants.get(waiter.tenant);
    if (!fifo) {
      fifo = new TenantFifo();
      this.tenants.set(waiter.tenant, fifo);
    }
    fifo.push(waiter);
    this.live++;
  }

  /** The next waiter, round-robin over the eligible tenants; removed from the queue. */
  shift(eligible: EligibleTenant = ANY): Waiter | undefined {
    for (const tenant of this.visitOrder()) {
      if (!eligible(tenant)) continue;
      const fifo = this.tenants.get(tenant);
      const waiter = fifo?.shift();
      if (fifo && fifo.live === 0) this.tenants.delete(tenant);
      if (waiter) {
        this.live--;
        this.lastServed = tenant;
        return waiter;
      }
    }
    return undefined;
  }

  /** How many waiters an entry could go to now. */
  countEligible(eligible: EligibleTenant = ANY): number {
    if (eligible === ANY) return this.live;
    let count = 0;
    for (const [tenant, fifo] of this.tenants) if (eligible(tenant)) count += fifo.live;
    return count;
  }

  /** Removes the waiters `picked` chooses (timed out, abandoned) and returns them, settled, for the caller to answer. */
  takeWhere(picked: (waiter: Waiter) => boolean): Waiter[] {
    const taken: Waiter[] = [];
    for (const fifo of this.tenants.values()) for (const waiter of fifo.waiting()) if (picked(waiter)) taken.push(waiter);
    for (const waiter of taken) this.remove(waiter);
    return taken;
  }

  /** The earliest deadline of the waiters still waiting; +Infinity when none is. */
  earliestDeadline(): number {
    let earliest = Number.POSITIVE_INFINITY;
    for (const fifo of this.tenants.values()) for (const waiter of fifo.waiting()) if (waiter.deadline < earliest) earliest = waiter.deadline;
    return earliest;
  }

  /** Marks a waiter gone (timed out or rejected); its slot is skipped later. */
  remove(waiter: Waiter): void {
    if (waiter.settled) return;
    waiter.settled = true;
    this.live--;
    const fifo = this.tenants.get(waiter.tenant);
    if (!fifo) return;
    fifo.live--;
    if (fifo.live === 0) this.tenants.delete(waiter.tenant);
  }

  /** Tenants starting after the one served last, wrapping around. */
  private visitOrder(): Iterable<string> {
    // The common case — callers not told apart, or one principal waiting — allocates nothing.
    if (this.tenants.size < 2 || this.lastServed === undefined) return this.tenants.keys();
    const order = [...this.tenants.keys()];
    const at = order.indexOf(this.lastServed);
    return at < 0 ? order : [...order.slice(at + 1), ...order.slice(0, at + 1)];
  }
}
