/**
 * A RowCursor as an NDJSON response body: the header line (columns), one line per row, and a last
 * line saying how the stream ended — `{"command","rowCount","attempts"}`, or the registry's error
 * body when the statement failed after the header went out. The next batch is asked for only when
 * Node asks this Readable for more (the response's socket drained), which is the whole backpressure
 * path: caller socket → HTTP response → this stream → the engine's cursor → the database.
 *
 * Its time rules (the database's own wait is the statement deadline, in the engine):
 * - idle: a caller that takes no bytes for streams.idleTimeoutMs loses the stream: the response is
 *   cut (no last line), the statement is cancelled and the session released;
 * - overall: a stream still running after streams.maxDurationMs is ended with a STATEMENT_TIMEOUT line.
 */
import { Readable } from "node:stream";
import type { Column } from "../../schemas/query.js";
import type { RowCursor } from "../engines/engine.js";
import { GatewayError } from "../errors.js";
import { errorBody, toGatewayError } from "./error-handler.js";

export interface NdjsonStreamSettings {
  rowJson: (row: readonly unknown[]) => string;
  columns: readonly Column[];
  attempts: number;
  requestId: string;
  idleTimeoutMs: number;
  maxDurationMs: number;
  /** Told how the stream ended once it has: "ok", the failure's code, or "CALLER_GONE". */
  onEnd: (outcome: string, failure: GatewayError | undefined) => void;
}

export class NdjsonRowStream extends Readable {
  private fetching = false;
  private finished = false;
  private expired = false;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly overallTimer: NodeJS.Timeout;

  constructor(
    private readonly cursor: RowCursor,
    private readonly settings: NdjsonStreamSettings,
  ) {
    super();
    this.push(`${JSON.stringify({ columns: settings.columns })}\n`);
    this.overallTimer = setTimeout(() => {
      this.expired = true;
      // A pending fetch ends (its statement cancelled) and _read then writes the STATEMENT_TIMEOUT line.
      void this.cursor.close();
      if (!this.fetching) this._read();
    }, settings.maxDurationMs);
  }

  override _read(): void {
    this.stopIdleClock();
    if (this.fetching || this.finished) return;
    if (this.expired) {
      this.fail(this.overdue());
      return;
    }
    this.fetching = true;
    this.cursor.next().then(
      (rows) => {
        this.fetching = false;
        if (this.finished || this.destroyed) return;
        if (this.expired) {
          this.fail(this.overdue());
        } else if (rows.length === 0) {
          const summary = this.cursor.summary;
          this.end(`${JSON.stringify({ command: summary?.command ?? "", rowCount: summary?.rowCount ?? null, attempts: this.settings.attempts })}\n`, "ok", undefined);
        } else {
          let text = "";
          for (const row of rows) text += `${this.settings.rowJson(row)}\n`;
          this.push(text);
          this.startIdleClock();
        }
      },
      (err: unknown) => {
        this.fetching = false;
        if (this.finished || this.destroyed) return;
        this.fail(this.expired ? this.overdue() : toGatewayError(err));
      },
    );
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.stopIdleClock();
    clearTimeout(this.overallTimer);
    if (!this.finished) {
      this.finished = true;
      this.settings.onEnd("CALLER_GONE", undefined);
    }
    // The statement is cancelled and the session released in the background: nobody waits for it.
    void this.cursor.close();
    callback(err);
  }

  private fail(error: GatewayError): void {
    void this.cursor.close();
    this.end(`${JSON.stringify(errorBody(error, this.settings.requestId))}\n`, error.code, error);
  }

  private end(lastLine: string, outcome: string, failure: GatewayError | undefined): void {
    this.finished = true;
    clearTimeout(this.overallTimer);
    this.settings.onEnd(outcome, failure);
    this.push(lastLine);
    this.push(null);
  }

  private overdue(): GatewayError {
    return new GatewayError("STATEMENT_TIMEOUT", `the stream ran past streams.maxDurationMs (${this.settings.maxDurationMs}ms) and was ended; its statement was cancelled`);
  }

  /** The caller has this long to take what was pushed before the stream is given up. */
  private startIdleClock(): void {
    this.stopIdleClock();
    this.idleTimer = setTimeout(() => {
      this.destroy(new Error(`the caller took no bytes for streams.idleTimeoutMs (${this.settings.idleTimeoutMs}ms)`));
    }, this.settings.idleTimeoutMs);
  }

  private stopIdleClock(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }
}
