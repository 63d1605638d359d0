import { describe, expect, it } from "vitest";
import { PoolgateError, TransportError } from "./errors.js";
import { NdjsonResult } from "./row-stream.js";
import type { Column, StreamEnd } from "./wire.js";

/** A body delivered in the given chunks (as bytes, so multi-byte characters can be split). */
async function* body(...chunks: string[]): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(chunks.join(""), "utf8");
  let at = 0;
  for (const chunk of chunks) {
    const length = Buffer.byteLength(chunk, "utf8");
    yield bytes.subarray(at, at + length);
    at += length;
  }
}

async function read(chunks: AsyncIterable<Uint8Array>): Promise<{ rows: unknown[]; columns: Column[] | undefined; end: StreamEnd | undefined }> {
  const result = new NdjsonResult<unknown>(chunks, JSON.parse);
  const out: { rows: unknown[]; columns: Column[] | undefined; end: StreamEnd | undefined } = { rows: [], columns: await result.header(), end: undefined };
  for await (const row of result.rows()) out.rows.push(row);
  out.end = result.end;
  return out;
}

const HEADER = '{"columns":[{"name":"error","type":"text"}]}\n';
const END = '{"command":"SELECT","rowCount":2,"attempts":1}\n';

describe("the stream reader", () => {
  it("reads the header, the rows and the end across chunk boundaries, whatever the rows' keys", async () => {
    const text = `${HEADER}{"error":"naïve"}\n{"error":"é"}\n${END}`;
    // Split everywhere, including inside "ï" and "é" (two bytes each).
    const bytes = Buffer.from(text, "utf8");
    async function* byByte(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < bytes.length; i++) yield bytes.subarray(i, i + 1);
    }
    const result = await read(byByte());
    expect(result.columns).toEqual([{ name: "error", type: "text" }]);
    expect(result.rows).toEqual([{ error: "naïve" }, { error: "é" }]);
    expect(result.end).toEqual({ command: "SELECT", rowCount: 2, attempts: 1 });
  });

  it("throws the gateway's error when the last line is one, after the rows before it", async () => {
    const rows: unknown[] = [];
    const failure = await (async () => {
      const error = '{"error":{"code":"DATABASE_ERROR","message":"division by zero","retryable":false,"requestId":"r1","database":{"sqlstate":"22012","message":"division by zero"}}}\n';
      for await (const row of new NdjsonResult(body(HEADER, '{"error":"a row"}\n', error), JSON.parse).rows()) rows.push(row);
    })().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(rows).toEqual([{ error: "a row" }]);
    expect(failure).toBeInstanceOf(PoolgateError);
    expect((failure as PoolgateError).code).toBe("DATABASE_ERROR");
  });

  it("throws when the body ends without its last line", async () => {
    await expect(read(body(HEADER))).rejects.toBeInstanceOf(TransportError);
    await expect(read(body())).rejects.toBeInstanceOf(TransportError);
  });

  it("gives the header before any row is asked for, reading no further than its line", async () => {
    let chunksRead = 0;
    async function* counted(): AsyncGenerator<Uint8Array> {
      for await (const chunk of body(HEADER, '{"error":"a row"}\n', END)) {
        chunksRead++;
        yield chunk;
      }
    }
    const result = new NdjsonResult<unknown>(counted(), JSON.parse);
    expect(await result.header()).toEqual([{ name: "error", type: "text" }]);
    expect(chunksRead).toBe(1);
    const rows: unknown[] = [];
    for await (const row of result.rows()) rows.push(row);
    expect(rows).toEqual([{ error: "a row" }]);
    expect(result.end).toEqual({ command: "SELECT", rowCount: 2, attempts: 1 });
  });
});
