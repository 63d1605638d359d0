/**
 * Verifies IAM identity proofs: checks a proof locally (sts-proof.ts), replays it to STS, and reads
 * the caller's ARN from the answer. Owns the identity cache (keyed by a digest of the signature, an
 * entry never outliving its proof's replay window), the single-flight map (concurrent requests with
 * one proof share one STS call), and the slots that bound STS calls in flight. Nothing here logs: a
 * proof is a bearer credential for its lifetime.
 *
 * Time: the injected `now` decides freshness and cache expiry; timeouts are real timers.
 */
import { performance } from "node:perf_hooks";
import { Agent, request as undiciRequest } from "undici";
import { GatewayError } from "../errors.js";
import { principalOfArn } from "../aws/principal-arn.js";
import { type CheckedProof, checkProof, type IamAuthSettings } from "./sts-proof.js";

/** Who STS says signed the proof. */
export interface VerifiedIdentity {
  /** As STS reported it: an assumed role keeps its session name (for logs). */
  readonly arn: string;
  /** What grants are looked up by (aws/principal-arn.ts): the role's ARN without session or path. */
  readonly principal: string;
  readonly account: string;
  readonly userId: string;
}

/** One replay of a proof, as handed to the transport. */
export interface StsRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly signal: AbortSignal;
}
export interface StsResponse {
  readonly status: number;
  readonly body: string;
}
export type StsSend = (request: StsRequest) => Promise<StsResponse>;

export interface StsVerifierOptions {
  /** The clock for freshness and cache expiry, epoch ms. Default: Date.now. */
  now?: () => number;
  /** The transport to STS. Default: undici, to `stsEndpoint` or the proof's STS host. */
  send?: StsSend;
}

/** STS answers are a few hundred bytes; anything much larger is not STS. */
const MAX_RESPONSE_BYTES = 16 * 1024;
/** 4xx codes that mean "STS is busy", not "the proof is bad": retryable. */
const THROTTLED = new Set(["Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequestsException"]);

export class StsVerifier {
  private readonly now: () => number;
  private readonly send: StsSend;
  private readonly agent: Agent | undefined;
  private readonly cache: IdentityCache;
  private readonly slots: CheckSlots;
  private readonly pending = new Map<string, Promise<VerifiedIdentity>>();
  private readonly endpoint: string | undefined;
  private closed = false;

  constructor(
    private readonly settings: IamAuthSettings,
    options: StsVerifierOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.cache = new IdentityCache(settings.cacheMaxEntries);
    this.slots = new CheckSlots(settings.maxConcurrentChecks);
    // The path is always "/": that is what the proof signed.
    this.endpoint = settings.stsEndpoint === undefined ? undefined : new URL("/", settings.stsEndpoint).toString();
    if (options.send) {
      this.send = options.send;
    } else {
      const agent = new Agent({ connections: settings.maxConcurrentChecks, keepAliveTimeout: 30_000 });
      this.agent = agent;
      this.send = (request) => sendWithUndici(agent, request);
    }
  }

  /**
   * The identity behind an `AWS-STS ...` header value. Throws GatewayError UNAUTHENTICATED for a proof
   * refused locally or by STS, AUTHENTICATION_UNAVAILABLE when STS could not answer in time.
   */
  async verify(headerValue: string): Promise<VerifiedIdentity> {
    if (this.closed) throw new GatewayError("AUTHENTICATION_UNAVAILABLE", "the IAM verifier is closed (the gateway is stopping)");
    // Local checks first: an invalid, re-targeted or stale proof never causes a network call.
    const proof = checkProof(headerValue, this.settings, this.now());
    const cached = this.cache.get(proof.signatureDigest, this.now());
    if (cached) return cached;
    let pending = this.pending.get(proof.signatureDigest);
    if (!pending) {
      pending = this.check(proof).finally(() => this.pending.delete(proof.signatureDigest));
      this.pending.set(proof.signatureDigest, pending);
    }
    return pending;
  }

  /**
   * Failures are not cached. A negative cache would only spare STS repeats of one bad proof, which
   * cost an attacker nothing to vary (the slots bound STS load instead); and caching an UNAVAILABLE or
   * an IAM-eventual-consistency refusal would stretch a blip into an outage for that caller.
   */
  private async check(proof: CheckedProof): Promise<VerifiedIdentity> {
    const startedAt = performance.now();
    const release = await this.slots.acquire(this.settings.checkTimeoutMs);
    try {
      const remainingMs = this.settings.checkTimeoutMs - (performance.now() - startedAt);
      const response = await this.call(proof, remainingMs);
      const identity = identityOf(response);
      // Never past the proof's own window: after it the proof is refused even when its answer is cached.
      this.cache.set(proof.signatureDigest, identity, Math.min(this.now() + this.settings.cacheTtlMs, proof.validUntilMs));
      return identity;
    } finally {
      release();
    }
  }

  private async call(proof: CheckedProof, remainingMs: number): Promise<StsResponse> {
    const timeoutMs = this.settings.checkTimeoutMs;
    if (remainingMs <= 0) throw new GatewayError("AUTHENTICATION_UNAVAILABLE", `no STS call slot within ${timeoutMs}ms`);
    const signal = AbortSignal.timeout(Math.ceil(remainingMs));
    const url = this.endpoint ?? `https://${proof.host}/`;
    try {
      // The Host header stays the signed STS host even when the endpoint is a VPC endpoint or a stand-in.
      return await this.send({ url, headers: proof.forwardHeaders, body: proof.body, signal });
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      const reason = signal.aborted ? `no answer within ${timeoutMs}ms` : `the call failed (${errorCodeOf(err)})`;
      throw new GatewayError("AUTHENTICATION_UNAVAILABLE", `STS could not verify the caller: ${reason}`, { cause: err });
    }
  }

  /** Refuses new verifications, fails waiting ones, and closes the connections to STS. */
  close(): void {
    this.closed = true;
    this.slots.close();
    this.cache.clear();
    void this.agent?.destroy().catch(() => undefined);
  }
}

function errorCodeOf(err: unknown): string {
  if (!(err instanceof Error)) return "error";
  const code = (err as NodeJS.ErrnoException).code;
  return typeof code === "string" ? code : err.name;
}

/** POSTs with undici, reading at most MAX_RESPONSE_BYTES of the answer. */
async function sendWithUndici(dispatcher: Agent, { url, headers, body, signal }: StsRequest): Promise<StsResponse> {
  const response = await undiciRequest(url, { method: "POST", headers: { ...headers }, body, signal, dispatcher });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_RESPONSE_BYTES) {
      response.body.destroy();
      throw new GatewayError("AUTHENTICATION_UNAVAILABLE", `STS answered ${response.statusCode} with more than ${MAX_RESPONSE_BYTES} bytes`);
    }
    chunks.push(buffer);
  }
  return { status: response.statusCode, body: Buffer.concat(chunks).toString("utf8") };
}

/** Maps STS's answer to an identity or a GatewayError; never echoes the body. */
function identityOf({ status, body }: StsResponse): VerifiedIdentity {
  if (status === 200) return parseIdentity(body);
  const code = /<Error>[\s\S]*?<Code>([A-Za-z0-9.]{1,64})<\/Code>/.exec(body)?.[1];
  const answered = `STS answered ${status}${code === undefined ? "" : ` ${code}`}`;
  if (status >= 500 || status === 429 || (code !== undefined && THROTTLED.has(code))) {
    throw new GatewayError("AUTHENTICATION_UNAVAILABLE", `STS could not verify the caller: ${answered}`);
  }
  if (status >= 400) throw new GatewayError("UNAUTHENTICATED", `IAM proof refused by STS: ${code ?? `status ${status}`}`);
  throw new GatewayError("AUTHENTICATION_UNAVAILABLE", `STS could not verify the caller: ${answered} (unexpected)`);
}

/** The single text of `<tag>` in `xml`, or undefined when absent or repeated. */
function onlyText(xml: string, tag: string, content: string): string | undefined {
  const matches = [...xml.matchAll(new RegExp(`<${tag}>(${content})</${tag}>`, "g"))];
  return matches.length === 1 ? matches[0]?.[1] : undefined;
}

function parseIdentity(xml: string): VerifiedIdentity {
  const result = onlyText(xml, "GetCallerIdentityResult", "[\\s\\S]*?");
  const arn = result === undefined ? undefined : onlyText(result, "Arn", "[^<&]{1,2048}");
  const userId = result === undefined ? undefined : onlyText(result, "UserId", "[^<&]{1,256}");
  const account = result === undefined ? undefined : onlyText(result, "Account", "\\d{12}");
  if (arn === undefined || userId === undefined || account === undefined) {
    throw new GatewayError("AUTHENTICATION_UNAVAILABLE", "STS answered 200 without a readable GetCallerIdentityResult");
  }
  let principal: string;
  try {
    principal = principalOfArn(arn);
  } catch (err) {
    throw new GatewayError("UNAUTHENTICATED", `STS reports an identity the gateway cannot grant by: ${arn}`, { cause: err });
  }
  if (principal.split(":")[4] !== account) throw new GatewayError("AUTHENTICATION_UNAVAILABLE", "STS answered with an ARN of another account than its Account");
  return Object.freeze({ arn, principal, account, userId });
}

/** A bounded LRU of verified identities, each with its own expiry (epoch ms). */
class IdentityCache {
  private readonly entries = new Map<string, { identity: VerifiedIdentity; expiresAtMs: number }>();

  constructor(private readonly maxEntries: number) {}

  get(key: string, nowMs: number): VerifiedIdentity | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (nowMs >= entry.expiresAtMs) return undefined;
    this.entries.set(key, entry); // most recently used last
    return entry.identity;
  }

  set(key: string, identity: VerifiedIdentity, expiresAtMs: number): void {
    this.entries.delete(key);
    this.entries.set(key, { identity, expiresAtMs });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(oldest);
    }
  }

  clear(): void {
    this.entries.clear();
  }
}

/** At most `max` STS calls at once; the rest wait in FIFO order, each for at most its timeout. */
class CheckSlots {
  private inUse = 0;
  private readonly waiting: { grant: () => void; fail: (err: GatewayError) => void }[] = [];

  constructor(private readonly max: number) {}

  /** Resolves with the release function once a slot is held. */
  acquire(timeoutMs: number): Promise<() => void> {
    const release = once(() => this.release());
    if (this.inUse < this.max) {
      this.inUse++;
      return Promise.resolve(release);
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve(release);
        },
        fail: (err: GatewayError) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        const state = `inFlight=${this.inUse}, waiting=${this.waiting.length}`;
        reject(new GatewayError("AUTHENTICATION_UNAVAILABLE", `no STS call slot within ${timeoutMs}ms (${state}, maxConcurrentChecks=${this.max})`));
      }, timeoutMs);
      this.waiting.push(waiter);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    // The slot passes straight to the next waiter, so inUse does not change.
    if (next) next.grant();
    else this.inUse--;
  }

  close(): void {
    for (const waiter of this.waiting.splice(0)) waiter.fail(new GatewayError("AUTHENTICATION_UNAVAILABLE", "the IAM verifier is closed (the gateway is stopping)"));
  }
}

function once(action: () => void): () => void {
  let done = false;
  return () => {
    if (!done) {
      done = true;
      action();
    }
  };
}
