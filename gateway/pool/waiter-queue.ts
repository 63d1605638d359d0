/** FIFO of callers waiting for a connection: O(1) push, shift and (lazy) removal on timeout. */
import type { GatewayError } from "../errors.js";
import type { PoolEntry } from "./pool-entry.js";

export interface Waiter {
  readonly enqueuedAt: number;
  settled: boolean;
  timer: NodeJS.Timeout | undefined;
  resolve(entry: PoolEntry): void;
  reject(error: GatewayError): void;
}

export class WaiterQueue {
  private items: (Waiter | null)[] = [];
  private head = 0;
  private live = 0;

  get length(): number {
    return this.live;
  }

  push(waiter: Waiter): void {
    this.items.push(waiter);
    this.live++;
  }

  /** The oldest waiter still waiting, removed from the queue. */
  shift(): Waiter | undefined {
    while (this.head < this.items.length) {
      const waiter = this.items[this.head];
      this.items[this.head++] = null;
      if (waiter && !waiter.settled) {
        this.live--;
        this.compact();
        return waiter;
      }
    }
    this.compact();
    return undefined;
  }

  /** Marks a waiter gone (timed out); its slot is skipped later. */
  remove(waiter: Waiter): void {
    if (waiter.settled) return;
    waiter.settled = true;
    this.live--;
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
