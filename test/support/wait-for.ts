/**
 * The one way tests wait for state: poll a condition until it holds or a deadline passes, then fail
 * naming what was awaited. No fixed sleeps: a loaded machine only makes the wait longer, never wrong.
 */

/** Polls `check` every `intervalMs` until it is true; throws after `timeoutMs` naming `what`. */
export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs = 10000, what = "condition", intervalMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
