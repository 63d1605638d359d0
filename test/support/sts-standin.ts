/**
 * Simulates AWS STS's GetCallerIdentity on 127.0.0.1 (an ephemeral port), for the credentials it is
 * given. It really checks SigV4 as STS does: it recomputes the signature (@smithy/signature-v4) over
 * the method, path, body and exactly the signed headers it received (Host as received), at the
 * x-amz-date it received, and compares in constant time. It refuses unknown keys and wrong session
 * tokens (InvalidClientTokenId), signatures older or newer than 15 minutes ("Signature expired",
 * SignatureDoesNotMatch), and answers in STS's XML shapes. It counts calls and the most it saw at
 * once, and can be told to answer slowly or with a fault (500s, throttling).
 */
import { randomUUID, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { SignatureV4 } from "@smithy/signature-v4";
import { NodeSha256 } from "../../client/iam-auth.js";

export interface StsTestIdentity {
  accessKeyId: string;
  secretAccessKey: string;
  /** Set for session credentials: requests must carry exactly this x-amz-security-token. */
  sessionToken?: string;
  /** What GetCallerIdentity reports, e.g. arn:aws:sts::123456789012:assumed-role/app/session. */
  arn: string;
}

export interface StsFault {
  status: number;
  code: string;
}

export interface StsStandIn {
  /** http://127.0.0.1:<port>/ — for auth.iam.stsEndpoint. */
  readonly url: string;
  /** Requests received, valid or not. */
  readonly calls: number;
  /** Most requests being answered at the same moment. */
  readonly maxConcurrent: number;
  /** The Host header of every request received, in order. */
  readonly hostsSeen: readonly string[];
  /** Delay every answer by this long (real time); 0 answers at once. */
  answerAfterMs(delayMs: number): void;
  /** Answer every request with this error (after any delay); undefined returns to normal. */
  failWith(fault: StsFault | undefined): void;
  /** Back to answering at once, without faults, with the counters at zero. */
  reset(): void;
  close(): Promise<void>;
}

const MAX_SKEW_MS = 15 * 60_000;
const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/;

class StsRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function startStsStandIn(identities: StsTestIdentity[], now: () => number = Date.now): Promise<StsStandIn> {
  const byKey = new Map(identities.map((identity) => [identity.accessKeyId, identity]));
  const hostsSeen: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let calls = 0;
  let inFlight = 0;
  let maxConcurrent = 0;
  let delayMs = 0;
  let fault: StsFault | undefined;

  const server = http.createServer((req, res) => {
    calls++;
    inFlight++;
    maxConcurrent = Math.max(maxConcurrent, inFlight);
    // "close" also fires when the caller gives up, so an abandoned request stops counting at once.
    res.on("close", () => inFlight--);
    hostsSeen.push(req.headers.host ?? "");
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const respond = (): void => {
        void answer(req, Buffer.concat(chunks).toString("utf8"), byKey, now(), fault).then(({ status, xml }) => {
          if (!res.destroyed) res.writeHead(status, { "content-type": "text/xml" }).end(xml);
        });
      };
      if (delayMs === 0) return respond();
      const timer = setTimeout(() => {
        timers.delete(timer);
        respond();
      }, delayMs);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    get calls() {
      return calls;
    },
    get maxConcurrent() {
      return maxConcurrent;
    },
    hostsSeen,
    answerAfterMs: (ms) => (delayMs = ms),
    failWith: (next) => (fault = next),
    reset: () => {
      calls = 0;
      maxConcurrent = inFlight;
      hostsSeen.length = 0;
      delayMs = 0;
      fault = undefined;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function answer(
  req: http.IncomingMessage,
  body: string,
  byKey: ReadonlyMap<string, StsTestIdentity>,
  nowMs: number,
  fault: StsFault | undefined,
): Promise<{ status: number; xml: string }> {
  if (fault) return { status: fault.status, xml: errorXml(fault.status, fault.code, "injected fault") };
  try {
    const identity = await authenticate(req, body, byKey, nowMs);
    return { status: 200, xml: identityXml(identity) };
  } catch (err) {
    if (err instanceof StsRefusal) return { status: err.status, xml: errorXml(err.status, err.code, err.message) };
    return { status: 500, xml: errorXml(500, "InternalFailure", "stand-in error") };
  }
}

/** The identity whose key signed this request, or an StsRefusal as STS would answer. */
async function authenticate(req: http.IncomingMessage, body: string, byKey: ReadonlyMap<string, StsTestIdentity>, nowMs: number): Promise<StsTestIdentity> {
  const form = new URLSearchParams(body);
  if (req.method !== "POST" || form.get("Action") !== "GetCallerIdentity" || form.get("Version") !== "2011-06-15") {
    throw new StsRefusal(400, "InvalidAction", "Could not find operation for this request");
  }
  const authorization = header(req, "authorization");
  if (authorization === undefined) throw new StsRefusal(403, "MissingAuthenticationToken", "Request is missing Authentication Token");
  const match = AUTHORIZATION.exec(authorization);
  if (!match) throw new StsRefusal(400, "IncompleteSignature", "Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters");
  const [, accessKeyId = "", scopeDate, scopeRegion = "", scopeService = "", signedList = "", signature = ""] = match;
  const identity = byKey.get(accessKeyId);
  const token = header(req, "x-amz-security-token");
  if (!identity || token !== identity.sessionToken) throw new StsRefusal(403, "InvalidClientTokenId", "The security token included in the request is invalid.");
  const amzDate = header(req, "x-amz-date") ?? "";
  const signedAt = parseAmzDate(amzDate);
  if (signedAt === undefined) throw new StsRefusal(400, "IncompleteSignature", "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
  if (nowMs - signedAt > MAX_SKEW_MS) throw new StsRefusal(403, "SignatureDoesNotMatch", `Signature expired: ${amzDate} is now earlier than the allowed 15 minutes.`);
  if (signedAt - nowMs > MAX_SKEW_MS) throw new StsRefusal(403, "SignatureDoesNotMatch", `Signature not yet current: ${amzDate} is still later than the allowed 15 minutes.`);
  if (scopeService !== "sts" || scopeRegion !== regionOfHost(header(req, "host") ?? "") || scopeDate !== amzDate.slice(0, 8)) {
    throw new StsRefusal(403, "SignatureDoesNotMatch", "Credential should be scoped to a valid region, service and date.");
  }
  const expected = await recompute(req, body, identity, { region: scopeRegion, signedHeaders: signedList.split(";"), signingDate: new Date(signedAt) });
  if (!timingSafeEqual(Buffer.from(expected), Buffer.from(signature))) {
    throw new StsRefusal(403, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided.");
  }
  return identity;
}

/** The signature of this request as the identity's secret key signs it, over exactly the signed headers. */
async function recompute(
  req: http.IncomingMessage,
  body: string,
  identity: StsTestIdentity,
  { region, signedHeaders, signingDate }: { region: string; signedHeaders: string[]; signingDate: Date },
): Promise<string> {
  const headers: Record<string, string> = {};
  for (const name of signedHeaders) {
    const value = header(req, name);
    // The signer adds x-amz-date and the token itself, from the signing date and the credentials.
    if (value !== undefined && name !== "x-amz-date" && name !== "x-amz-security-token") headers[name] = value;
  }
  const url = new URL(req.url ?? "/", "http://stand-in");
  const sessionToken = signedHeaders.includes("x-amz-security-token") ? identity.sessionToken : undefined;
  const signer = new SignatureV4({
    service: "sts",
    region,
    credentials: { accessKeyId: identity.accessKeyId, secretAccessKey: identity.secretAccessKey, sessionToken },
    sha256: NodeSha256,
    applyChecksum: false,
  });
  const signed = await signer.sign(
    { method: req.method ?? "", protocol: "https:", hostname: headers.host ?? "", path: url.pathname, query: Object.fromEntries(url.searchParams), headers, body },
    { signingDate },
  );
  return /Signature=([0-9a-f]{64})$/.exec(signed.headers.authorization ?? "")?.[1] ?? "";
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

function regionOfHost(host: string): string | undefined {
  if (host === "sts.amazonaws.com") return "us-east-1";
  return /^sts\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/.exec(host)?.[1];
}

function parseAmzDate(value: string): number | undefined {
  const parts = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!parts) return undefined;
  const [, year, month, day, hour, minute, second] = parts.map(Number);
  return Date.UTC(year ?? 0, (month ?? 1) - 1, day, hour, minute, second);
}

function identityXml({ arn, accessKeyId }: StsTestIdentity): string {
  const account = arn.split(":")[4] ?? "";
  const session = /:assumed-role\/[^/]+\/(.+)$/.exec(arn)?.[1];
  const userId = session === undefined ? `AIDA${accessKeyId.slice(4)}` : `AROA${accessKeyId.slice(4)}:${session}`;
  return `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <GetCallerIdentityResult>
    <Arn>${arn}</Arn>
    <UserId>${userId}</UserId>
    <Account>${account}</Account>
  </GetCallerIdentityResult>
  <ResponseMetadata>
    <RequestId>${randomUUID()}</RequestId>
  </ResponseMetadata>
</GetCallerIdentityResponse>
`;
}

function errorXml(status: number, code: string, message: string): string {
  return `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <Error>
    <Type>${status >= 500 ? "Receiver" : "Sender"}</Type>
    <Code>${code}</Code>
    <Message>${message}</Message>
  </Error>
  <RequestId>${randomUUID()}</RequestId>
</ErrorResponse>
`;
}
