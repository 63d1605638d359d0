/**
 * Checks an IAM identity proof before anything is sent anywhere: a caller's presigned
 * `sts:GetCallerIdentity` request, as HashiCorp Vault's AWS auth method and aws-iam-authenticator use.
 * This is the security boundary: the gateway will replay what passes here to STS with its own network
 * access, so only the one request STS answers with the signer's identity may pass — to an allow-listed
 * STS host, bound to this gateway by a signed audience header, and fresh. Pure: no I/O, the clock is an
 * argument. Every refusal is an UNAUTHENTICATED GatewayError whose message never repeats a credential.
 *
 * Wire format: `AWS-STS <base64url or base64 of JSON>`, the JSON being
 * `{"method":"POST","url":"https://sts.<region>.amazonaws.com/","headers":{...},"body":"Action=GetCallerIdentity&Version=2011-06-15"}`.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import type { AuthConfig } from "../config/schema.js";
import { GatewayError } from "../errors.js";

export const STS_PROOF_SCHEME = "AWS-STS";
/** The signed header binding a proof to one gateway (its value is `auth.iam.audience`). */
export const AUDIENCE_HEADER = "x-poolgate-server-id";
/** Largest header value accepted; a proof with a Lambda session token is about 3 KiB. */
export const MAX_PROOF_CHARS = 8192;
export const GET_CALLER_IDENTITY_BODY = "Action=GetCallerIdentity&Version=2011-06-15";

export type IamAuthSettings = NonNullable<AuthConfig["iam"]>;

/** A proof that passed every local check: what to send to STS, and how long its answer may be used. */
export interface CheckedProof {
  /** The STS host the proof was signed for (and the Host header sent). */
  readonly host: string;
  /** The region of the signature's credential scope. */
  readonly region: string;
  /** Lower-case header name -> value, exactly as the caller signed them. */
  readonly forwardHeaders: Readonly<Record<string, string>>;
  readonly body: string;
  /** SHA-256 (hex) of the signature: the cache key, so no signature is kept in memory. */
  readonly signatureDigest: string;
  readonly signedAtMs: number;
  /** After this, the proof is refused even if its identity is cached (replay window). */
  readonly validUntilMs: number;
}

/** Headers a SigV4-signed GetCallerIdentity may carry; anything else is refused, signed or not. */
const ALLOWED_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "x-amz-date",
  "authorization",
  "content-type",
  "content-length",
  AUDIENCE_HEADER,
  "x-amz-security-token",
  "x-amz-content-sha256",
]);
const REQUIRED_SIGNED = ["host", "x-amz-date", AUDIENCE_HEADER] as const;

const proofSchema = z.strictObject({
  method: z.string().max(16),
  url: z.string().max(256),
  headers: z
    .record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/), z.string().max(4096).regex(/^[\x20-\x7e]*$/, "printable ASCII"))
    .refine((headers) => Object.keys(headers).length <= ALLOWED_HEADERS.size, "too many headers"),
  body: z.string().max(256),
});
type Proof = z.infer<typeof proofSchema>;

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=[A-Z0-9]{16,128}\/(\d{8})\/([a-z0-9-]{1,32})\/([a-z0-9-]{1,32})\/aws4_request, ?SignedHeaders=([a-z0-9-]+(?:;[a-z0-9-]+)*), ?Signature=([0-9a-f]{64})$/;
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;
const CONTENT_TYPE = /^application\/x-www-form-urlencoded(; ?charset=utf-8)?$/i;
const BODY_SHA256 = createHash("sha256").update(GET_CALLER_IDENTITY_BODY).digest("hex");

function refuse(reason: string): never {
  throw new GatewayError("UNAUTHENTICATED", `IAM proof refused: ${reason}`);
}

/**
 * Decodes and checks an `AWS-STS ...` header value (see the module comment) against the settings at
 * `nowMs` (epoch ms). Throws GatewayError UNAUTHENTICATED with the reason when anything is off.
 */
export function checkProof(headerValue: string, settings: IamAuthSettings, nowMs: number): CheckedProof {
  const proof = parseProof(decodeProof(headerValue));
  if (proof.method !== "POST") refuse("the method must be POST");
  const { host, region } = targetOf(proof.url, settings);
  if (proof.body !== GET_CALLER_IDENTITY_BODY) refuse(`the body must be exactly ${GET_CALLER_IDENTITY_BODY}`);
  const headers = lowerCaseHeaders(proof.headers);
  checkPlainHeaders(headers, host, settings.audience);
  const signedAtMs = signingTime(headers.get("x-amz-date"), nowMs, settings.maxClockSkewMs);
  const signature = checkAuthorization(headers, region, headers.get("x-amz-date") ?? "");
  return {
    host,
    region,
    forwardHeaders: Object.freeze(Object.fromEntries(headers)),
    body: proof.body,
    signatureDigest: createHash("sha256").update(signature).digest("hex"),
    signedAtMs,
    validUntilMs: signedAtMs + settings.maxClockSkewMs,
  };
}

function decodeProof(headerValue: string): unknown {
  // Capped before any decoding, so a huge header costs nothing.
  if (headerValue.length > MAX_PROOF_CHARS) refuse(`the header is longer than ${MAX_PROOF_CHARS} characters`);
  const prefix = `${STS_PROOF_SCHEME} `;
  if (!headerValue.startsWith(prefix)) refuse(`the header must be "${STS_PROOF_SCHEME} <base64 of the signed request>"`);
  const encoded = headerValue.slice(prefix.length);
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded)) refuse("the proof is not base64 or base64url");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(encoded, "base64"));
  } catch {
    refuse("the proof is not UTF-8");
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    refuse("the proof is not JSON");
  }
}

function parseProof(json: unknown): Proof {
  const parsed = proofSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ` : "";
  refuse(`the proof must be {method, url, headers, body} (${where}${issue?.message ?? "invalid"})`);
}

/** STS host -> signing region, built once per settings object. */
const allowListCache = new WeakMap<IamAuthSettings, ReadonlyMap<string, string>>();

/** `sts.<region>.amazonaws.com` (`.com.cn` in China) per allowed region; the global host only with us-east-1. */
export function allowedStsHosts(settings: IamAuthSettings): ReadonlyMap<string, string> {
  let hosts = allowListCache.get(settings);
  if (!hosts) {
    const map = new Map<string, string>();
    for (const region of settings.regions) {
      map.set(`sts.${region}.${region.startsWith("cn-") ? "amazonaws.com.cn" : "amazonaws.com"}`, region);
      // The global endpoint signs with us-east-1, so it stands for that region.
      if (region === "us-east-1") map.set("sts.amazonaws.com", region);
    }
    hosts = map;
    allowListCache.set(settings, hosts);
  }
  return hosts;
}

/** The URL must be exactly `https://<allowed host>/`: no userinfo, port, path, query or fragment. */
function targetOf(url: string, settings: IamAuthSettings): { host: string; region: string } {
  const hosts = allowedStsHosts(settings);
  const host = /^https:\/\/([a-z0-9.-]+)\/$/.exec(url)?.[1];
  const region = host === undefined ? undefined : hosts.get(host);
  if (host === undefined || region === undefined) refuse(`the URL must be https://<host>/ with host one of ${[...hosts.keys()].join(", ")}`);
  return { host, region };
}

function lowerCaseHeaders(headers: Record<string, string>): Map<string, string> {
  const lower = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    if (!ALLOWED_HEADERS.has(key)) refuse(`header ${key} is not allowed in a proof`);
    if (lower.has(key)) refuse(`header ${key} appears twice`);
    lower.set(key, value);
  }
  return lower;
}

/** The headers whose values are fixed by the target, the body and this gateway. */
function checkPlainHeaders(headers: ReadonlyMap<string, string>, host: string, audience: string): void {
  if (headers.get("host") !== host) refuse("the host header must equal the URL's host");
  if (headers.get(AUDIENCE_HEADER) !== audience) refuse(`${AUDIENCE_HEADER} does not name this gateway (a proof made for another audience)`);
  const contentType = headers.get("content-type");
  if (contentType !== undefined && !CONTENT_TYPE.test(contentType)) refuse("content-type must be application/x-www-form-urlencoded");
  const contentLength = headers.get("content-length");
  if (contentLength !== undefined && contentLength !== String(Buffer.byteLength(GET_CALLER_IDENTITY_BODY))) refuse("content-length does not match the body");
  const payloadHash = headers.get("x-amz-content-sha256");
  if (payloadHash !== undefined && payloadHash !== BODY_SHA256) refuse("x-amz-content-sha256 does not match the body");
}

/** Epoch ms of x-amz-date (ISO 8601 basic, UTC), which must lie within ±maxClockSkewMs of now. */
function signingTime(amzDate: string | undefined, nowMs: number, maxClockSkewMs: number): number {
  const parts = amzDate === undefined ? null : AMZ_DATE.exec(amzDate);
  if (!parts) refuse("x-amz-date must be present, as YYYYMMDDTHHMMSSZ");
  const [, year, month, day, hour, minute, second] = parts.map(Number);
  const signedAtMs = Date.UTC(year ?? 0, (month ?? 0) - 1, day, hour, minute, second);
  // Date.UTC rolls 20240231 over to March: a round trip catches impossible dates.
  if (new Date(signedAtMs).toISOString().replace(/[-:]|\.\d{3}/g, "") !== amzDate) refuse("x-amz-date is not a valid date");
  if (nowMs - signedAtMs > maxClockSkewMs) refuse(`signed more than ${maxClockSkewMs}ms ago (expired or replayed)`);
  if (signedAtMs - nowMs > maxClockSkewMs) refuse(`signed more than ${maxClockSkewMs}ms in the future (the caller's clock is off)`);
  return signedAtMs;
}

/** Parses the SigV4 authorization header, checks its scope and signed-header list; returns the signature. */
function checkAuthorization(headers: ReadonlyMap<string, string>, region: string, amzDate: string): string {
  const match = AUTHORIZATION.exec(headers.get("authorization") ?? "");
  if (!match) refuse("authorization must be AWS4-HMAC-SHA256 Credential=<key>/<date>/<region>/sts/aws4_request, SignedHeaders=<list>, Signature=<64 hex>");
  const [, scopeDate, scopeRegion, scopeService, signedList = "", signature = ""] = match;
  if (scopeService !== "sts") refuse("the credential scope must be for the sts service");
  if (scopeRegion !== region) refuse(`the credential scope's region must be ${region}, the region of the STS host`);
  if (scopeDate !== amzDate.slice(0, 8)) refuse("the credential scope's date must be x-amz-date's day");
  const signed = signedList.split(";");
  if (signed.some((name, i) => i > 0 && name <= (signed[i - 1] ?? ""))) refuse("SignedHeaders must be sorted and without repeats");
  for (const name of signed) {
    if (name === "authorization") refuse("authorization cannot be a signed header");
    if (!headers.has(name)) refuse(`signed header ${name} is missing from the proof`);
  }
  for (const name of REQUIRED_SIGNED) {
    if (!signed.includes(name)) refuse(`${name} must be signed`);
  }
  if (headers.has("x-amz-security-token") && !signed.includes("x-amz-security-token")) refuse("x-amz-security-token must be signed");
  return signature;
}
