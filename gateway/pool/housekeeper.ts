/**
 * The pool's periodic job (HikariCP's HouseKeeper, MaxLifetimeTask and KeepaliveTask in one pass):
 * retires connections past their jittered max lifetime, closes idle ones above minIdle after the idle
 * timeout (least recently used first), pings idle ones past the keepalive interval, then refills.
 */
import type { Clock } from "../clock.js";
import type { PoolEntry } from "./pool-entry.js";

interface HousekeepingView {
  readonly entries: Set<PoolEntry>;
  readonly idle: PoolEntry[];
  readonly clock: Clock;
  readonly settings: {
    minIdle: number;
    maxSize: number;
    idleTimeoutMs: number;
    keepaliveMs: number;
    validationTimeoutMs: number;
  };
}

interface HousekeepingActions {
  retire(entry: PoolEntry, reason: string): void;
  evict(entry: PoolEntry, reason: string): void;
  /** Returns a pinged entry through the pool's checks (it may have become due meanwhile). */
  giveBack(entry: PoolEntry): void;
  fill(): void;
  describeError(err: unknown): string;
}

export async function runHousekeeping(pool: HousekeepingView, act: HousekeepingActions): Promise<void> {
  const now = pool.clock.now();
  const { minIdle, maxSize, idleTimeoutMs, keepaliveMs, validationTimeoutMs } = pool.settings;

  for (const entry of [...pool.entries]) {
    if (now < entry.expiresAt) continue;
    if (entry.state === "NOT_IN_USE") act.retire(entry, "max lifetime");
    else if (entry.state === "IN_USE") entry.retireOnRelease = "max lifetime";
  }

  if (idleTimeoutMs > 0 && minIdle < maxSize) {
    let excess = pool.idle.length - minIdle;
    for (const entry of [...pool.idle]) {
      if (excess <= 0) break;
      if (now - entry.lastAccessedAt >= idleTimeoutMs) {
        act.retire(entry, "idle timeout");
        excess--;
      }
    }
  }

  const pings: Promise<void>[] = [];
  if (keepaliveMs > 0) {
    for (const entry of [...pool.idle]) {
      if (now - entry.lastAccessedAt < keepaliveMs) continue;
      pool.idle.splice(pool.idle.indexOf(entry), 1);
      entry.state = "RESERVED";
      pings.push(
        entry.connection.ping(validationTimeoutMs).then(
          () => act.giveBack(entry),
          (err: unknown) => act.evict(entry, `keepalive failed: ${act.describeError(err)}`),
        ),
      );
    }
  }

  act.fill();
  await Promise.all(pings);
  act.fill();
}
