/**
 * A PostgreSQL stream as the core sees it (RowCursor): batches pulled from the portal (portal-query.ts)
 * one Execute at a time, the statement's failure as the shared lifecycle read it, and an early end
 * that closes the portal (or cancels the statement still producing rows) before the session is handed on.
 */
import type { Column } from "../../../schemas/query.js";
import { GatewayError } from "../../errors.js";
import type { RowCursor, StreamSummary } from "../engine.js";
import type { PortalQuery } from "./portal-query.js";

export class PostgresRowCursor implements RowCursor {
  private ended = false;
  private first: unknown[][] | undefined;
  /** The lifecycle's reading of how the statement ended (undefined: cleanly). */
  private readonly outcome: Promise<GatewayError | undefined>;

  constructor(
    private readonly portal: PortalQuery,
    ran: Promise<void>,
    readonly columns: Column[],
  ) {
    this.outcome = ran.then(
      () => undefined,
      (err: unknown) => (err instanceof GatewayError ? err : new GatewayError("INTERNAL_ERROR", "the stream failed", { cause: err })),
    );
  }

  get summary(): StreamSummary | undefined {
    return this.ended ? { command: this.portal.command, rowCount: this.portal.rowCount } : undefined;
  }

  /** Reads the first batch (or the end): a failure before any row is thrown from here. */
  async start(): Promise<void> {
    this.first = await this.next();
  }

  async next(): Promise<unknown[][]> {
    if (this.first !== undefined) {
      const rows = this.first;
      this.first = undefined;
      return rows;
    }
    if (this.ended) return [];
    let rows: unknown[][];
    try {
      rows = await this.portal.fetch();
    } catch (err) {
      const read = await this.outcome;
      // The gateway's own refusal (a row too large) as it is; a failure on the server as the lifecycle read it.
      throw err instanceof GatewayError ? err : (read ?? err);
    }
    if (rows.length > 0) return rows;
    const failure = await this.outcome;
    if (failure) throw failure;
    this.ended = true;
    return [];
  }

  async close(): Promise<void> {
    if (this.ended) return;
    this.portal.stop("because its caller went away");
    await this.outcome;
  }
}
