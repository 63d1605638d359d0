/**
 * IAM authentication to a Poolgate gateway: the caller proves its IAM identity (in a Lambda, its
 * execution role) with a presigned `sts:GetCallerIdentity` request that it signs but never sends. The
 * gateway replays it to STS and learns the caller's ARN; no secret leaves the caller, and the signed
 * `x-poolgate-server-id` header binds the proof to one gateway. The same pattern as HashiCorp Vault's
 * AWS auth method and aws-iam-authenticator.
 *
 * ```ts
 * const auth = iamAuth({ audience: "poolgate-prod" });
 * const db = createClient({ url, sign: auth });            // the Poolgate client
 * addPoolgateAuth(new RDSDataClient({ region, endpoint }), auth);   // any AWS SDK v3 client
 * ```
 */
import { createHash, createHmac, type Hash, type Hmac } from "node:crypto";
import type { OutgoingRequest } from "./transport.js";

/** The request header the proof travels in: `x-poolgate-auth: AWS-STS <proof>`. */
export const POOLGATE_AUTH_HEADER = "x-poolgate-auth";
// Wire constants shared with gateway/auth/sts-proof.ts (the client bundle does not import the gateway);
// the integration tests verify this client's proofs with the gateway's checks.
const SCHEME = "AWS-STS";
const AUDIENCE_HEADER = "x-poolgate-server-id";
const BODY = "Action=GetCallerIdentity&Version=2011-06-15";
const FORM = "application/x-www-form-urlencoded; charset=utf-8";
const DEFAULT_REUSE_MS = 240_000;
/** Credentials this close to expiring are not used for a new proof, so a replay never meets ExpiredToken. */
const EXPIRY_MARGIN_MS = 60_000;

/** AWS credentials, as the SDK's credential providers resolve them. */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
}

/** Resolves credentials; the SDK's providers (fromNodeProviderChain, fromTemporaryCredentials...) fit. */
export type AwsCredentialsProvider = () => Promise<AwsCredentials>;

export interface IamAuthOptions {
  /** The gateway's `auth.iam.audience`. A proof signed for one audience is refused by every other gateway. */
  audience: string;
  /** Region whose STS endpoint the proof is signed for; the gateway must allow it. Default: `process.env.AWS_REGION` (set in every Lambda). */
  region?: string;
  /** Who to sign as. Default: the SDK's default chain (`defaultProvider()`): in a Lambda, its execution role. */
  credentials?: AwsCredentials | AwsCredentialsProvider;
  /** STS host to sign for. Default: `sts.<region>.amazonaws.com` (`.amazonaws.com.cn` in China). */
  stsHost?: string;
  /**
   * A proof is reused for this long, then a new one is signed. Default: 240000 (4 minutes), under the
   * gateway's default 5-minute window (`auth.iam.maxClockSkewMs`) so a reused proof is never refused as old.
   */
  reuseMs?: number;
  /** The clock, epoch ms. Default: `Date.now`. */
  now?: () => number;
}

/** Usable directly as the Poolgate client's `sign` hook; `header()` gives the header value itself. */
export interface IamAuth {
  (request: OutgoingRequest): Promise<Record<string, string>>;
  /** `AWS-STS <proof>`: signed once, reused for `reuseMs` or until the credentials near their expiry. */
  header(): Promise<string>;
}

/** Creates an IAM identity prover (see the module comment). Throws at once when no region is known. */
export function iamAuth(options: IamAuthOptions): IamAuth {
  const region = regionOf(options);
  const reuseMs = options.reuseMs ?? DEFAULT_REUSE_MS;
  if (!Number.isFinite(reuseMs) || reuseMs < 0) throw new Error(`iamAuth: reuseMs must be a number >= 0, not ${reuseMs}`);
  const host = options.stsHost ?? `sts.${region}.${region.startsWith("cn-") ? "amazonaws.com.cn" : "amazonaws.com"}`;
  const now = options.now ?? Date.now;
  const credentials = providerOf(options.credentials);
  let current: { header: string; reuseUntil: number } | undefined;
  let signing: Promise<string> | undefined;

  async function signNew(): Promise<string> {
    const resolved = await credentials();
    const signedAt = now();
    const header = await signProof({ audience: options.audience, region, host, credentials: resolved, signedAt });
    const expiresAt = resolved.expiration?.getTime() ?? Number.POSITIVE_INFINITY;
    current = { header, reuseUntil: Math.min(signedAt + reuseMs, expiresAt - EXPIRY_MARGIN_MS) };
    return header;
  }

  function header(): Promise<string> {
    if (current !== undefined && now() < current.reuseUntil) return Promise.resolve(current.header);
    // Concurrent requests share one signing (and one credential fetch).
    signing ??= signNew().finally(() => {
      signing = undefined;
    });
    return signing;
  }

  const sign = async (_request: OutgoingRequest): Promise<Record<string, string>> => ({ [POOLGATE_AUTH_HEADER]: await header() });
  return Object.assign(sign, { header });
}

function regionOf(options: IamAuthOptions): string {
  const region = options.region ?? process.env.AWS_REGION;
  if (region === undefined || region === "") throw new Error("iamAuth: no region: pass options.region or set AWS_REGION");
  return region;
}

function providerOf(credentials: AwsCredentials | AwsCredentialsProvider | undefined): AwsCredentialsProvider {
  if (credentials === undefined) {
    // Loaded on first use: about 20 ms of module loading at a Lambda's cold start that callers who
    // pass credentials, or use no IAM auth at all, never pay.
    let chain: AwsCredentialsProvider | undefined;
    return async () => {
      chain ??= (await import("@aws-sdk/credential-provider-node")).defaultProvider();
      return chain();
    };
  }
  if (typeof credentials === "function") return credentials;
  return () => Promise.resolve(credentials);
}

interface ProofInput {
  audience: string;
  region: string;
  host: string;
  credentials: AwsCredentials;
  signedAt: number;
}

/** Signs (without sending) `POST https://<host>/` GetCallerIdentity and encodes it as `AWS-STS <base64url JSON>`. */
async function signProof({ audience, region, host, credentials, signedAt }: ProofInput): Promise<string> {
  // Imported on first use, like the credential chain: a client without IAM auth never evaluates it.
  const { SignatureV4 } = await import("@smithy/signature-v4");
  // applyChecksum false: STS does not need x-amz-content-sha256, and the header stays smaller.
  const signer = new SignatureV4({ service: "sts", region, credentials, sha256: NodeSha256, applyChecksum: false });
  const signed = await signer.sign(
    {
      method: "POST",
      protocol: "https:",
      hostname: host,
      path: "/",
      query: {},
      headers: { host, "content-type": FORM, [AUDIENCE_HEADER]: audience },
      body: BODY,
    },
    { signingDate: new Date(signedAt) },
  );
  const proof = { method: "POST", url: `https://${host}/`, headers: signed.headers, body: BODY };
  return `${SCHEME} ${Buffer.from(JSON.stringify(proof)).toString("base64url")}`;
}

type SourceData = string | ArrayBuffer | ArrayBufferView;

/**
 * SHA-256, or HMAC-SHA256 when constructed with a secret, over node:crypto, in the shape smithy's
 * SigV4 signer takes (its Checksum interface): no extra hashing package in a Lambda bundle.
 */
export class NodeSha256 {
  private hash: Hash | Hmac;

  constructor(private readonly secret?: SourceData) {
    this.hash = this.fresh();
  }

  update(chunk: Uint8Array): void {
    this.hash.update(chunk);
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }

  reset(): void {
    this.hash = this.fresh();
  }

  private fresh(): Hash | Hmac {
    if (this.secret === undefined) return createHash("sha256");
    const key = typeof this.secret === "string" ? this.secret : ArrayBuffer.isView(this.secret) ? new Uint8Array(this.secret.buffer, this.secret.byteOffset, this.secret.byteLength) : new Uint8Array(this.secret);
    return createHmac("sha256", key);
  }
}

/** Where addPoolgateAuth puts its middleware in the AWS SDK v3 stack. */
export interface BuildStepOptions {
  step: "build";
  name: string;
  priority: "high";
}

/**
 * The part of an AWS SDK v3 client (RDSDataClient, and every other) that addPoolgateAuth uses, typed
 * structurally so the client bundle imports no SDK types: `Args` and `Result` are the client's own
 * build-step argument and output types, inferred from it.
 */
export interface SdkClientLike<Args extends { request: unknown }, Result> {
  middlewareStack: {
    add(middleware: (next: (args: Args) => Promise<Result>) => (args: Args) => Promise<Result>, options: BuildStepOptions): void;
  };
}

/**
 * Adds `x-poolgate-auth` to every request of an AWS SDK v3 client — for Data API callers (and ORMs on
 * top of RDSDataClient) pointed at a gateway: one middleware, step "build", name "poolgateAuth",
 * priority "high". The SDK's own SigV4 signing comes later and is ignored by the gateway. Adding it
 * twice to one client throws (the SDK refuses duplicate middleware names).
 */
export function addPoolgateAuth<Args extends { request: unknown }, Result>(client: SdkClientLike<Args, Result>, auth: Pick<IamAuth, "header">): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request;
      if (typeof request === "object" && request !== null && "headers" in request && isHeaderBag(request.headers)) {
        request.headers[POOLGATE_AUTH_HEADER] = await auth.header();
      }
      return next(args);
    },
    { step: "build", name: "poolgateAuth", priority: "high" },
  );
}

function isHeaderBag(value: unknown): value is Record<string, string> {
  return typeof value === "object" && value !== null;
}
