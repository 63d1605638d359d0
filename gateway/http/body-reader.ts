/**
 * Reads a JSON request body off its stream and parses it (json-body.ts), for both surfaces: Fastify's
 * own reader's rules (the body limit, before reading when Content-Length declares too much and while
 * reading when the body grows past it; a body whose length differs from its Content-Length is
 * refused; the text decoded once, at the end), less a cost it pays on every request. Fastify's reader
 * detaches its three listeners when the body ends; removing an emitter's last listener of a kind
 * deletes a key of its event table, which V8 then keeps as a slow dictionary, and the stream's next
 * reads of it go through the megamorphic path: about 3,900 instructions of every request (the bench's
 * instruction ledger). Here they stay attached once the body has ended: the stream is spent and goes
 * with its request. Only the data listener is taken off, when the body is refused part way, so that
 * nothing more of it is kept; the others then see a settled body and do nothing.
 */
import type { IncomingMessage } from "node:http";
import { errorCodes, type FastifyInstance, type FastifyRequest } from "fastify";
import { parseJsonBody } from "./json-body.js";

type Done = (err: Error | null, body?: unknown) => void;

declare module "fastify" {
  interface FastifyRequest {
    /**
     * The JSON body's text as the caller sent it (before any rewrite): object and array parameters are
     * bound as written (param-sources.ts), and a forwarded request carries it on. Kept on the request
     * rather than beside the parsed body, so no weak table is written per request.
     */
    bodyText: string | undefined;
  }
}

/** Declares the request's bodyText (undefined until a JSON body is read); once per server. */
export function declareBodyText(app: FastifyInstance): void {
  app.decorateRequest("bodyText", undefined);
}

/**
 * A Fastify content-type parser (addContentTypeParser's function form) for bodies of at most `limit`
 * bytes; `prepare` may rewrite the text before JSON.parse (json-body.ts).
 */
export function jsonBodyReader(limit: number, prepare?: (text: string) => string): (request: FastifyRequest, payload: IncomingMessage, done: Done) => void {
  return (request, payload, done) => {
    const declared = Number(request.headers["content-length"]);
    if (declared > limit) return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    const chunks: Buffer[] = [];
    let received = 0;
    // Answered once: an error the stream reports after its end (the caller's socket reset), or the end
    // of a body already refused as too large, does nothing.
    let settled = false;
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      received += bytes.length;
      if (received > limit) {
        payload.removeListener("data", onData);
        settled = true;
        return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      }
      chunks.push(bytes);
    };
    const onEnd = (err?: Error & { statusCode?: number }) => {
      if (settled) return;
      settled = true;
      if (err) {
        if (!(typeof err.statusCode === "number" && err.statusCode >= 400)) err.statusCode = 400;
        return done(err);
      }
      if (!Number.isNaN(declared) && received !== declared) return done(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      const text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received)).toString("utf8");
      let body: unknown;
      try {
        body = parseJsonBody(text, prepare);
      } catch (parseError) {
        return done(parseError as Error);
      }
      request.bodyText = text;
      done(null, body);
    };
    payload.on("data", onData);
    payload.on("end", onEnd);
    payload.on("error", onEnd);
    payload.resume();
  };
}
