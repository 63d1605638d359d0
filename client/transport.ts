/**
 * HTTP to the gateway over the platform's `fetch` (Node 20+, Bun, Deno, edge runtimes): JSON in and
 * out, deadlines as abort signals, the signing hook, and a transaction's load-balancer affinity. No
 * HTTP library of its own: Node's global fetch keeps connections alive between requests by default
 * (its undici pool), and so do Bun's and Deno's. A connection that died while a Lambda was frozen
 * fails the next request on it with a transport error, which the retry rule sends again when that is
 * safe (a read, a write under its idempotency key).
 */
import { DeadlineExceededError, errorFromBody, TransportError } from "./errors.js";
import { traceHeaders } from "./trace-context.js";
import type { ErrorBody } from "./wire.js";

/** What the signing hook sees of a request, to add headers (for example an IAM identity proof). */
export interface OutgoingRequest {
  method: "POST";
  url: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * An AbortSignal as `Transport.open` takes it, named by what it has: the package's declarations must
 * type-check without DOM or Node typings (a consumer may compile with `types: []`).
 */
export interface AbortSignalLike {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** A response body as fetch gives it (a web ReadableStream of bytes), as far as the client reads it. */
export interface ResponseBodyLike {
  getReader(): { read(): Promise<{ done: boolean; value?: Uint8Array | undefined }>; cancel(reason?: unknown): Promise<void> };
}

/** A fetch response, as far as the client reads it. */
export interface FetchResponseLike {
  readonly status: number;
  readonly headers: { get(name: string): string | null; getSetCookie?(): string[] };
  readonly body: ResponseBodyLike | null;
  text(): Promise<string>;
}

/** The platform's `fetch`, as far as the client calls it (see {@link ClientOptions.fetch}). */
export type FetchLike = (url: string, init: { method: "POST"; headers: Record<string, string>; body: string; signal?: AbortSignalLike | undefined }) => Promise<FetchResponseLike>;

/**
 * The load balancer's stickiness cookies (`AWSALB`, `AWSALBAPP-n`, ...) one interactive transaction
 * was answered with, sent back on that transaction's later calls only. Outside a transaction nothing
 * is remembered or sent: a cookie on every call would pin the client to one task, bypassing
 * least-outstanding-requests (issue 35 §4), and a task's transactions reach their owner anyway (the
 * gateway forwards a call that lands elsewhere); inside one the cookie only saves that hop.
 */
export interface TransactionAffinity {
  cookie?: string;
}

/** Adds headers to a request before it is sent; may be async (fetching credentials). */
export type RequestSigner = (request: OutgoingRequest) => Record<string, string> | Promise<Record<string, string>>;

export interface TransportOptions {
  url: string;
  headers: Record<string, string>;
  sign: RequestSigner | undefined;
  fetch: FetchLike;
  json: { parse(text: string): unknown; stringify(value: unknown): string };
  /** Send the caller's trace context (trace-context.ts). */
  traceContext: boolean;
}

/**
 * Errors that mean the request never left: safe to send again whatever it was. Node's (system errors
 * under fetch's "fetch failed"), and Bun's names for the same.
 */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT", "EHOSTUNREACH", "ENETUNREACH", "ConnectionRefused"]);

function codeOf(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as Error & { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = current.cause;
  }
  return undefined;
}

/** A fetch body's chunks; leaving the loop early cancels the body (the request is abandoned). */
async function* chunksOf(body: ResponseBodyLike): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let done = false;
  try {
    while (!done) {
      const next = await reader.read();
      done = next.done;
      if (next.value !== undefined) yield next.value;
    }
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
  }
}

export class Transport {
  private readonly base: URL;

  constructor(private readonly options: TransportOptions) {
    this.base = new URL(options.url);
  }

  /**
   * POSTs JSON; resolves the parsed answer, or rejects with the gateway's error as a PoolgateError, a
   * TransportError, or a DeadlineExceededError when `deadlineAt` (epoch ms) passes. `affinity`: the
   * transaction the call belongs to, whose stickiness cookies it sends and keeps.
   */
  async post<T>(path: string, payload: unknown, deadlineAt: number | undefined, affinity?: TransactionAffinity): Promise<T> {
    const { status, text } = await this.send(path, payload, deadlineAt, undefined, affinity, async (response) => ({ status: response.status, text: await response.text() }));
    return this.parseAnswer<T>(status, text);
  }

  /**
   * POSTs JSON and resolves the body of a 2xx answer unread, for the caller to read as it arrives
   * (until `signal` aborts it); any other answer rejects as `post` does.
   */
  async open(path: string, payload: unknown, deadlineAt: number | undefined, signal: AbortSignalLike): Promise<AsyncIterable<Uint8Array>> {
    type Opened = { open: true; body: AsyncIterable<Uint8Array> } | { open: false; status: number; text: string };
    const answer = await this.send(path, payload, deadlineAt, signal, undefined, async (response): Promise<Opened> => {
      if (response.status < 200 || response.status >= 300) return { open: false, status: response.status, text: await response.text() };
      if (response.body === null) throw new TransportError(`the gateway answered ${response.status} without a body`, undefined, false, undefined);
      return { open: true, body: chunksOf(response.body) };
    });
    if (answer.open) return answer.body;
    return this.parseAnswer<never>(answer.status, answer.text);
  }

  private async send<A>(
    path: string,
    payload: unknown,
    deadlineAt: number | undefined,
    callerSignal: AbortSignalLike | undefined,
    affinity: TransactionAffinity | undefined,
    read: (response: FetchResponseLike) => Promise<A>,
  ): Promise<A> {
    const now = Date.now();
    const remaining = deadlineAt === undefined ? undefined : deadlineAt - now;
    if (remaining !== undefined && remaining <= 0) throw new DeadlineExceededError("the deadline passed before the request was sent", false);

    const url = new URL(path, this.base).toString();
    const body = this.options.json.stringify(payload);
    let headers: Record<string, string> = { "content-type": "application/json", ...this.options.headers };
    if (this.options.traceContext) Object.assign(headers, await traceHeaders());
    if (this.options.sign) headers = { ...headers, ...(await this.options.sign({ method: "POST", url, headers, body })) };
    if (affinity?.cookie) headers.cookie = affinity.cookie;

    const deadlineSignal = remaining === undefined ? undefined : AbortSignal.timeout(remaining);
    const signals = [deadlineSignal, callerSignal as AbortSignal | undefined].filter((signal): signal is AbortSignal => signal !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    try {
      const response = await this.options.fetch(url, { method: "POST", headers, body, signal });
      if (affinity) rememberStickiness(affinity, response.headers);
      return await read(response);
    } catch (err) {
      if (err instanceof TransportError) throw err;
      if (deadlineSignal?.aborted) throw new DeadlineExceededError(`no answer within the deadline (${remaining}ms)`, true);
      const code = codeOf(err);
      const reason = err instanceof Error ? `${err.message}${err.cause instanceof Error ? ` (${err.cause.message})` : ""}` : String(err);
      throw new TransportError(`request to ${this.base.origin} failed: ${reason}`, code, code !== undefined && NOT_SENT.has(code), err);
    }
  }

  private parseAnswer<T>(status: number, text: string): T {
    let parsed: unknown;
    try {
      parsed = text.length > 0 ? this.options.json.parse(text) : undefined;
    } catch (err) {
      throw new TransportError(`the gateway answered ${status} with a body that is not JSON`, undefined, false, err);
    }
    if (status >= 200 && status < 300) return parsed as T;
    if (typeof parsed === "object" && parsed !== null && "error" in parsed) throw errorFromBody(status, parsed as ErrorBody);
    throw new TransportError(`the gateway answered ${status} without an error body`, undefined, false, undefined);
  }
}

/** Keeps the stickiness cookies (AWSALB...) of a transaction's answer for its next calls. */
function rememberStickiness(affinity: TransactionAffinity, headers: FetchResponseLike["headers"]): void {
  const setCookie = headers.getSetCookie?.() ?? [headers.get("set-cookie") ?? ""];
  const cookies = setCookie.map((cookie) => cookie.split(";")[0]?.trim() ?? "").filter((pair) => pair.startsWith("AWSALB"));
  if (cookies.length > 0) affinity.cookie = cookies.join("; ");
}
