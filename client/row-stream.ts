/**
 * Reads a streamed result (POST /v1/query/stream) as it arrives: NDJSON parsed line by line, the
 * first line the columns, the last the end (or the gateway's error), every line between a row. A row
 * is handed on once the line after it has arrived (only then is it known not to be the last line), so
 * memory holds one chunk of the body whatever the result's size. A body that ends without its last
 * line is an error, never a short result. The header is read on its own (`header()`), so a caller can
 * have the columns before it asks for the first row.
 */
import { errorFromBody, TransportError } from "./errors.js";
import type { Column, ErrorBody, StreamEnd, StreamHeader } from "./wire.js";

/** Lines of text from chunks of UTF-8, split at "\n". */
async function* lines(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let tail = "";
  for await (const chunk of body) {
    tail += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    let at = tail.indexOf("\n");
    let from = 0;
    while (at >= 0) {
      yield tail.slice(from, at);
      from = at + 1;
      at = tail.indexOf("\n", from);
    }
    tail = tail.slice(from);
  }
  tail += decoder.decode();
  if (tail.length > 0) yield tail;
}

const incomplete = (what: string) => new TransportError(`the gateway's stream ended without its ${what}: the result is incomplete`, undefined, false, undefined);

/** One NDJSON body: its header first, then its rows and end. */
export class NdjsonResult<Row> {
  private readonly source: AsyncGenerator<string>;
  private columns: Column[] | undefined;
  /** How the stream ended, once the rows have been read to the end. */
  end: StreamEnd | undefined;

  constructor(
    body: AsyncIterable<Uint8Array | string>,
    private readonly parse: (text: string) => unknown,
  ) {
    this.source = lines(body);
  }

  /** The header's columns: reads up to the first line (once); throws when the body has none. */
  async header(): Promise<Column[]> {
    while (this.columns === undefined) {
      const next = await this.source.next();
      if (next.done) throw incomplete("last line");
      if (next.value.length === 0) continue;
      const parsed = this.parse(next.value) as Partial<StreamHeader> & Partial<ErrorBody>;
      if (parsed.error !== undefined) throw errorFromBody(200, parsed as ErrorBody);
      if (!Array.isArray(parsed.columns)) throw incomplete("header");
      this.columns = parsed.columns;
    }
    return this.columns;
  }

  /** The rows after the header; throws the gateway's error when the last line is one. */
  async *rows(): AsyncGenerator<Row> {
    await this.header();
    let held: string | undefined;
    for await (const line of this.source) {
      if (line.length === 0) continue;
      if (held !== undefined) yield this.parse(held) as Row;
      held = line;
    }
    if (held === undefined) throw incomplete("last line");
    const last = this.parse(held) as Partial<StreamEnd> & Partial<ErrorBody>;
    if (last.error !== undefined) throw errorFromBody(200, last as ErrorBody);
    if (typeof last.command !== "string" || typeof last.attempts !== "number") throw incomplete("end line");
    this.end = last as StreamEnd;
  }

  /** Stops reading: the body's source is told to stop (a fetch body is cancelled). */
  async close(): Promise<void> {
    await this.source.return(undefined);
  }
}
