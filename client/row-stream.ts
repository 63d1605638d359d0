/**
 * Reads a streamed result (POST /v1/query/stream) as it arrives: NDJSON parsed line by line, the
 * first line the columns, the last the end (or the gateway's error), every line between a row. A row
 * is handed on once the line after it has arrived (only then is it known not to be the last line), so
 * memory holds one chunk of the body whatever the result's size. A body that ends without its last
 * line is an error, never a short result.
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

export interface NdjsonResult {
  /** Resolves with the header's columns (rejects when the body has none). */
  onHeader(columns: Column[]): void;
  /** The end line, once the body ended cleanly. */
  onEnd(end: StreamEnd): void;
}

/** The rows of an NDJSON body, parsed with `parse`; throws the gateway's error when the last line is one. */
export async function* ndjsonRows<Row>(body: AsyncIterable<Uint8Array | string>, parse: (text: string) => unknown, result: NdjsonResult): AsyncGenerator<Row> {
  let header: StreamHeader | undefined;
  let held: string | undefined;
  for await (const line of lines(body)) {
    if (line.length === 0) continue;
    if (header === undefined) {
      header = parse(line) as StreamHeader;
      result.onHeader(header.columns);
      continue;
    }
    if (held !== undefined) yield parse(held) as Row;
    held = line;
  }
  if (header === undefined || held === undefined) throw new TransportError("the gateway's stream ended without its last line: the result is incomplete", undefined, false, undefined);
  const last = parse(held) as Partial<StreamEnd> & Partial<ErrorBody>;
  if (last.error !== undefined) throw errorFromBody(200, last as ErrorBody);
  if (typeof last.command !== "string" || typeof last.attempts !== "number") {
    throw new TransportError("the gateway's stream ended without its end line: the result is incomplete", undefined, false, undefined);
  }
  result.onEnd(last as StreamEnd);
}
