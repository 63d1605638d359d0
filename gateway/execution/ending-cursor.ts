/**
 * A stream's cursor that ends itself: `end` runs once — at the last (empty) batch, at the first failure
 * or at close — and no rows are asked for after it. A failure goes on as `failed` turns it. The lease
 * (release the session) and a read-only principal's stream (roll its transaction back) end this way.
 */
import type { RowCursor } from "../engines/engine.js";

export function endingCursor(cursor: RowCursor, end: () => Promise<void>, failed: (err: unknown) => unknown): RowCursor {
  let ended = false;
  const finish = async (): Promise<void> => {
    if (ended) return;
    ended = true;
    await end();
  };
  return {
    columns: cursor.columns,
    get summary() {
      return cursor.summary;
    },
    next: async () => {
      if (ended) return [];
      try {
        const rows = await cursor.next();
        if (rows.length === 0) await finish();
        return rows;
      } catch (err) {
        await finish();
        throw failed(err);
      }
    },
    close: finish,
  };
}
