import { describe, expect, it } from "vitest";
import { type Waiter, WaiterQueue } from "./waiter-queue.js";

const waiter = (id: number): Waiter & { id: number } => ({
  id,
  enqueuedAt: id,
  settled: false,
  timer: undefined,
  resolve: () => {},
  reject: () => {},
});

describe("waiter queue", () => {
  it("hands out waiters first in, first out, skipping the ones that gave up", () => {
    const queue = new WaiterQueue();
    const waiters = Array.from({ length: 5 }, (_, i) => waiter(i));
    for (const w of waiters) queue.push(w);
    queue.remove(waiters[1] as Waiter);
    queue.remove(waiters[3] as Waiter);
    expect(queue.length).toBe(3);
    const order: number[] = [];
    for (let w = queue.shift(); w; w = queue.shift()) order.push((w as Waiter & { id: number }).id);
    expect(order).toEqual([0, 2, 4]);
    expect(queue.length).toBe(0);
  });

  it("stays correct across compaction of a long queue", () => {
    const queue = new WaiterQueue();
    for (let i = 0; i < 5000; i++) queue.push(waiter(i));
    for (let i = 0; i < 3000; i++) expect((queue.shift() as Waiter & { id: number }).id).toBe(i);
    queue.push(waiter(5000));
    expect(queue.length).toBe(2001);
    expect((queue.shift() as Waiter & { id: number }).id).toBe(3000);
  });
});
