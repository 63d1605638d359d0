/**
 * Aurora's time positions, on both engines (docs/aurora.md): a point in the writer's time, "T" and
 * microseconds since the epoch ("T1764342000123456"). Aurora's readers share the writer's volume and
 * have no position a writer session could compare with (Aurora PostgreSQL refuses the WAL functions;
 * Aurora MySQL readers have no GTIDs), so read-your-writes uses a time bound built only from the
 * database's own figures:
 *
 * - A write's token is the writer's clock read after its COMMIT completed, on the same session.
 * - The writer's own position is its clock at the monitor's check.
 * - A reader's position is what the writer reports of it (aurora_replica_status(),
 *   information_schema.replica_host_status): last update time less the reported lag in ms, the
 *   writer's time up to which the reader has applied the writer's changes. The gateway's own clock
 *   plays no part, so a clock difference between gateway tasks cannot make a token read stale.
 * - A reader at `a` has applied a token `b` only when `a >= b + AURORA_CLOCK_MARGIN_MS`: the margin
 *   covers rounding of the millisecond lag figure and a clock difference between Aurora's instances
 *   (the writer's report time and the writer's token time come from the same instance; the margin is
 *   a second wall).
 */

/** See the header; stated in docs/aurora.md and the README's Aurora section. */
export const AURORA_CLOCK_MARGIN_MS = 10;
const MARGIN_US = AURORA_CLOCK_MARGIN_MS * 1000;

export function isTimePosition(text: string): boolean {
  return /^T\d{1,17}$/.test(text);
}

/** >= 0 when an instance applied through `a` has applied what committed by `b` (both time positions). */
export function compareTimePositions(a: string, b: string): number {
  return Number(a.slice(1)) - MARGIN_US - Number(b.slice(1));
}

/** The time position `micros` (a whole number of microseconds). */
export function timePosition(micros: number): string {
  return `T${Math.floor(micros)}`;
}

/**
 * Compares positions of one engine where Aurora's time positions may appear beside the engine's own
 * (`compareOwn`): one of each form is never "applied" (a token from before a change of form).
 */
export function comparePositionsWithTime(a: string, b: string, compareOwn: (a: string, b: string) => number): number {
  const timeA = isTimePosition(a);
  if (timeA !== isTimePosition(b)) return -1;
  return timeA ? compareTimePositions(a, b) : compareOwn(a, b);
}

/** "reader1=1764342000123456,reader2=..." (as the engines' inspection SQL lists them) as positions by server id. */
export function readerPositionsOf(listed: string | null): Map<string, string> {
  const positions = new Map<string, string>();
  for (const entry of (listed ?? "").split(",")) {
    const at = entry.lastIndexOf("=");
    if (at > 0) positions.set(entry.slice(0, at), `T${entry.slice(at + 1)}`);
  }
  return positions;
}
