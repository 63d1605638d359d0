/**
 * One keep-alive HTTP connection pool per client (undici, which Node's fetch is built on), JSON in and
 * out, deadlines as abort signals, and the signing hook. A Lambda execution environment that was frozen
 * between invocations may hold sockets the gateway has long closed: after a pause longer than
 * `freshConnectionAfterMs` the pool is replaced before the next request, so no request is written to a
 * dead socket.
 */
import { Agent, request as undiciRequest } from "undici";
import { DeadlineExceededError, errorFromBody, TransportError } from "./errors.js";
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

/** Adds headers to a request before it is sent; may be async (fetching credentials). */
export type RequestSigner = (request: OutgoingRequest) => Record<string, string> | Promise<Record<string, string>>;

export interface TransportOptions {
  url: string;
  headers: Record<string, string>;
  sign: RequestSigner | undefined;
  freshConnectionAfterMs: number;
  connections: number;
  json: { parse(text: string): unknown; stringify(value: unknown): string };
}

/** Errors that mean the request never left: safe to send again whatever it was. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT", "EHOSTUNREACH", "ENETUNREACH"]);

function codeOf(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === "string") return code;
    current = current.cause;
  }
  return undefined;
}

export class Transport {
  private agent: Agent;
  private lastUsedAt = 0;
  private stickiness: string | undefined;
  private readonly base: URL;

  constructor(private readonly options: TransportOptions) {
    this.base = new URL(options.url);
    this.agent = this.newAgent();
  }

  private newAgent(): Agent {
    return new Agent({ connections: this.options.connections, keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000 });
  }

  /**
   * POSTs JSON; resolves the parsed answer, or rejects with the gateway's error as a PoolgateError, a
   * TransportError, or a DeadlineExceededError when `deadlineAt` (epoch ms) passes.
   */
  async post<T>(path: string, payload: unknown, deadlineAt: number | undefined): Promise<T> {
    const { status, text } = await this.send(path, payload, deadlineAt, undefined, async (response) => ({
      status: response.statusCode,
      text: await response.body.text(),
    }));
    return this.parseAnswer<T>(status, text);
  }

  /**
   * POSTs JSON and resolves the body of a 2xx answer unread, for the caller to read as it arrives
   * (until `signal` aborts it); any other answer rejects as `post` does.
   */
  async open(path: string, payload: unknown, deadlineAt: number | undefined, signal: AbortSignalLike): Promise<AsyncIterable<Uint8Array>> {
    type Opened = { open: true; body: AsyncIterable<Uint8Array> } | { open: false; status: number; text: string };
    const answer = await this.send(path, payload, deadlineAt, signal as AbortSignal, async (response): Promise<Opened> =>
      response.statusCode >= 200 && response.statusCode < 300
        ? { open: true, body: response.body }
        : { open: false, status: response.statusCode, text: await response.body.text() },
    );
    if (answer.open) return answer.body;
    return this.parseAnswer<never>(answer.status, answer.text);
  }

  private async send<A>(
    path: string,
    payload: unknown,
    deadlineAt: number | undefined,
    callerSignal: AbortSignal | undefined,
    read: (response: Awaited<ReturnType<typeof undiciRequest>>) => Promise<A>,
  ): Promise<A> {
    const now = Date.now();
    if (this.lastUsedAt > 0 && now - this.lastUsedAt > this.options.freshConnectionAfterMs) {
      const stale = this.agent;
      this.agent = this.newAgent();
      // close(), not destroy(): requests still running on the old pool finish first.
      void stale.close().catch(() => undefined);
    }
    this.lastUsedAt = now;
    const remaining = deadlineAt === undefined ? undefined : deadlineAt - now;
    if (remaining !== undefined && remaining <= 0) throw new DeadlineExceededError("the deadline passed before the request was sent", false);

    const url = new URL(path, this.base).toString();
    const body = this.options.json.stringify(payload);
    let headers: Record<string, string> = { "content-type": "application/json", ...this.options.headers };
    if (this.options.sign) headers = { ...headers, ...(await this.options.sign({ method: "POST", url, headers, body })) };

    const deadlineSignal = remaining === undefined ? undefined : AbortSignal.timeout(remaining);
    const signals = [deadlineSignal, callerSignal].filter((signal): signal is AbortSignal => signal !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    if (this.stickiness) headers.cookie = this.stickiness;
    try {
      const response = await undiciRequest(url, { method: "POST", headers, body, dispatcher: this.agent, signal });
      this.rememberStickiness(response.headers["set-cookie"]);
      const answer = await read(response);
      this.lastUsedAt = Date.now();
      return answer;
    } catch (err) {
      if (deadlineSignal?.aborted) throw new DeadlineExceededError(`no answer within the deadline (${remaining}ms)`, true);
      const code = codeOf(err);
      throw new TransportError(`request to ${this.base.origin} failed: ${err instanceof Error ? err.message : String(err)}`, code, code !== undefined && NOT_SENT.has(code), err);
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

  /**
   * The load balancer's stickiness cookies (AWSALB...): sent back, so that one client's requests —
   * an interactive transaction's above all — reach the same gateway task.
   */
  private rememberStickiness(setCookie: string | string[] | undefined): void {
    if (setCookie === undefined) return;
    const cookies = (Array.isArray(setCookie) ? setCookie : [setCookie])
      .map((cookie) => cookie.split(";")[0]?.trim() ?? "")
      .filter((pair) => pair.startsWith("AWSALB"));
    if (cookies.length > 0) this.stickiness = cookies.join("; ");
  }

  /** Closes the keep-alive connections. */
  async close(): Promise<void> {
    await this.agent.close();
  }
}
