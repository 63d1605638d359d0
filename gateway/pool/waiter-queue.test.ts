import { describe, expect, it } from "vitest";
import { type Waiter, WaiterQueue } from "./waiter-queue.js";

type Named = Waiter & { id: string };

const waiter = (id: string, tenant = ""): Named => ({
  id,
  tenant,
  enqueuedAt: 0,
  deadline: Number.POSITIVE_INFINITY,
  settled: false,
  resolve: () => {},
  reject: () => {},
});

function drain(queue: WaiterQueue, eligible?: (tenant: string) => boolean): string[] {
  const order: string[] = [];
  for (let w = queue.shift(eligible); w; w = queue.shift(eligible)) order.push((w as Named).id);
  return order;
}

describe("waiter queue", () => {
  it("hands out waiters first in, first out, skipping the ones that gave up", () => {
    const queue = new WaiterQueue();
    const waiters = Array.from({ length: 5 }, (_, i) => waiter(String(i)));
    for (const w of waiters) queue.push(w);
    queue.remove(waiters[1] as Waiter);
    queue.remove(waiters[3] as Waiter);
    expect(queue.length).toBe(3);
    expect(drain(queue)).toEqual(["0", "2", "4"]);
    expect(queue.length).toBe(0);
  });

  it("stays correct across compaction of a long queue", () => {
    const queue = new WaiterQueue();
    for (let i = 0; i < 5000; i++) queue.push(waiter(String(i)));
    for (let i = 0; i < 3000; i++) expect((queue.shift() as Named).id).toBe(String(i));
    queue.push(waiter("5000"));
    expect(queue.length).toBe(2001);
    expect((queue.shift() as Named).id).toBe("3000");
  });

  it("serves tenants in turn, so a tenant with many waiters does not delay another's first", () => {
    const queue = new WaiterQueue();
    for (let i = 0; i < 4; i++) queue.push(waiter(`greedy${i}`, "greedy"));
    queue.push(waiter("polite0", "polite"));
    queue.push(waiter("polite1", "polite"));
    expect(drain(queue)).toEqual(["greedy0", "polite0", "greedy1", "polite1", "greedy2", "greedy3"]);
  });

  it("skips tenants that may not take a connection now, without losing their place", () => {
    const queue = new WaiterQueue();
    queue.push(waiter("a0", "a"));
    queue.push(waiter("b0", "b"));
    queue.push(waiter("a1", "a"));
    const onlyB = (tenant: string) => tenant === "b";
    expect(queue.countEligible(onlyB)).toBe(1);
    expect(drain(queue, onlyB)).toEqual(["b0"]);
    expect(queue.countEligible(onlyB)).toBe(0);
    expect(queue.length).toBe(2);
    expect(drain(queue)).toEqual(["a0", "a1"]);
  });

  it("counts a tenant's removed waiters out of its turn", () => {
    const queue = new WaiterQueue();
    const gone = waiter("b0", "b");
    queue.push(waiter("a0", "a"));
    queue.push(gone);
    queue.remove(gone);
    expect(queue.countEligible((tenant) => tenant === "b")).toBe(0);
    expect(queue.length).toBe(1);
    expect(drain(queue)).toEqual(["a0"]);
  });

  it("takes out the waiters picked (timed out, abandoned), settled, and leaves the rest in order", () => {
    const queue = new WaiterQueue();
    const waiters = [waiter("a", "t1"), waiter("b", "t2"), waiter("c", "t1"), waiter("d", "t2")].map((w, i) => ({ ...w, deadline: 100 + i }));
    for (const w of waiters) queue.push(w);
    expect(queue.earliestDeadline()).toBe(100);
    const taken = queue.takeWhere((w) => w.deadline <= 101);
    expect(taken.map((w) => (w as Named).id)).toEqual(["a", "b"]);
    expect(taken.every((w) => w.settled)).toBe(true);
    expect(queue.length).toBe(2);
    expect(queue.earliestDeadline()).toBe(102);
    // A waiter already served is never taken again.
    expect(queue.shift()?.deadline).toBe(102);
    expect(queue.takeWhere(() => true).map((w) => (w as Named).id)).toEqual(["d"]);
    expect(queue.length).toBe(0);
    expect(queue.earliestDeadline()).toBe(Number.POSITIVE_INFINITY);
  });
});
