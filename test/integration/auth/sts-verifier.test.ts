/**
 * The IAM verifier against a local STS stand-in that really checks SigV4: proofs made by the client's
 * iamAuth are verified, tampered and re-targeted ones refused (the latter with no STS call), and the
 * cache, single-flight, slots and timeouts behave as configured. No gateway involved.
 */
import { request } from "undici";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type AwsCredentials, iamAuth } from "../../../client/iam-auth.js";
import { authConfigSchema } from "../../../gateway/config/schema.js";
import { GatewayError } from "../../../gateway/errors.js";
import type { IamAuthSettings } from "../../../gateway/auth/sts-proof.js";
import { StsVerifier } from "../../../gateway/auth/sts-verifier.js";
import { unusedPort } from "../../support/ports.js";
import { startStsStandIn, type StsStandIn } from "../../support/sts-standin.js";

const AUDIENCE = "poolgate-test";
const USER = { accessKeyId: "AKIAPOOLGATEUSER0001", secretAccessKey: "user-secret-key/EXAMPLE+0001" };
const ROLE = { accessKeyId: "ASIAPOOLGATEROLE0001", secretAccessKey: "role-secret-key/EXAMPLE+0001", sessionToken: "IQoJb3JpZ2luX2VjEXAMPLE//session+token=" };
const USER_ARN = "arn:aws:iam::111122223333:user/ci/alice";
const ROLE_ARN = "arn:aws:sts::111122223333:assumed-role/app-role/app-function";

let sts: StsStandIn;
const verifiers: StsVerifier[] = [];

beforeAll(async () => {
  sts = await startStsStandIn([
    { ...USER, arn: USER_ARN },
    { ...ROLE, arn: ROLE_ARN },
  ]);
});
beforeEach(() => sts.reset());
afterEach(() => {
  for (const verifier of verifiers.splice(0)) verifier.close();
});
afterAll(async () => {
  await sts?.close();
});

function settingsWith(overrides: Partial<IamAuthSettings> = {}): IamAuthSettings {
  const iam = authConfigSchema.parse({ iam: { audience: AUDIENCE, regions: ["eu-west-1"], stsEndpoint: sts.url, ...overrides } }).iam;
  if (!iam) throw new Error("no iam settings");
  return iam;
}

function verifierWith(overrides: Partial<IamAuthSettings> = {}, now?: () => number): StsVerifier {
  const verifier = new StsVerifier(settingsWith(overrides), now === undefined ? {} : { now });
  verifiers.push(verifier);
  return verifier;
}

interface ProofOptions {
  credentials?: AwsCredentials;
  audience?: string;
  region?: string;
  stsHost?: string;
  at?: number;
}

function proof({ credentials = USER, audience = AUDIENCE, region = "eu-west-1", stsHost, at = Date.now() }: ProofOptions = {}): Promise<string> {
  return iamAuth({ audience, region, credentials, ...(stsHost === undefined ? {} : { stsHost }), now: () => at }).header();
}

/** Decodes a proof, lets `edit` change it, encodes it again. */
function tamper(header: string, edit: (blob: { url: string; headers: Record<string, string>; body: string }) => void): string {
  const blob = JSON.parse(Buffer.from(header.slice("AWS-STS ".length), "base64url").toString("utf8"));
  edit(blob);
  return `AWS-STS ${Buffer.from(JSON.stringify(blob)).toString("base64url")}`;
}

async function refusalOf(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error("the proof was accepted");
}

describe("a valid proof", () => {
  it("made with long-term keys is verified: ARN, user principal without its path, account", async () => {
    const identity = await verifierWith().verify(await proof());
    expect(identity).toEqual({ arn: USER_ARN, principal: "arn:aws:iam::111122223333:user/alice", account: "111122223333", userId: "AIDAPOOLGATEUSER0001" });
    expect(sts.calls).toBe(1);
  });

  it("made with session credentials is verified, the principal being the role without the session", async () => {
    const identity = await verifierWith().verify(await proof({ credentials: ROLE }));
    expect(identity).toMatchObject({ arn: ROLE_ARN, principal: "arn:aws:iam::111122223333:role/app-role", account: "111122223333" });
  });

  it("reaches the stand-in with the signed STS host as its Host header", async () => {
    await verifierWith().verify(await proof());
    expect(sts.hostsSeen).toEqual(["sts.eu-west-1.amazonaws.com"]);
  });
});

describe("a tampered proof", () => {
  it.each<[string, (blob: { headers: Record<string, string> }) => void, RegExp]>([
    ["a changed signature", (b) => (b.headers.authorization = (b.headers.authorization ?? "").replace(/Signature=[0-9a-f]{4}/, "Signature=0000")), /SignatureDoesNotMatch/],
    ["a changed signed header", (b) => (b.headers["content-type"] = "application/x-www-form-urlencoded"), /SignatureDoesNotMatch/],
    ["a changed signing time", (b) => (b.headers["x-amz-date"] = (b.headers["x-amz-date"] ?? "").replace(/\d\dZ$/, (s) => `${(Number(s.slice(0, 2)) + 1) % 60}`.padStart(2, "0") + "Z")), /SignatureDoesNotMatch/],
    ["another session token", (b) => (b.headers["x-amz-security-token"] = "IQoJb3JpZ2luX2VjOTHER"), /InvalidClientTokenId/],
  ])("(%s) is refused by STS as UNAUTHENTICATED, naming STS's code only", async (_what, edit, code) => {
    const refusal = await refusalOf(verifierWith().verify(tamper(await proof({ credentials: ROLE }), edit)));
    expect(refusal.code).toBe("UNAUTHENTICATED");
    expect(refusal.message).toMatch(new RegExp(`^IAM proof refused by STS: ${code.source}$`));
    expect(sts.calls).toBe(1);
  });

  it("signed with an unknown key or a wrong secret is refused by STS", async () => {
    const verifier = verifierWith();
    expect((await refusalOf(verifier.verify(await proof({ credentials: { ...USER, accessKeyId: "AKIAPOOLGATEUNKNOWN1" } })))).message).toMatch(/InvalidClientTokenId/);
    expect((await refusalOf(verifier.verify(await proof({ credentials: { ...USER, secretAccessKey: "wrong" } })))).message).toMatch(/SignatureDoesNotMatch/);
  });

  it("with a changed body is refused before STS; the stand-in itself would refuse it too", async () => {
    const tampered = tamper(await proof(), (b) => (b.body = "Action=GetCallerIdentity&Version=2011-06-15&X=1"));
    expect((await refusalOf(verifierWith().verify(tampered))).message).toMatch(/body must be exactly/);
    expect(sts.calls).toBe(0);
    const blob = JSON.parse(Buffer.from(tampered.slice(8), "base64url").toString("utf8"));
    const direct = await request(sts.url, { method: "POST", headers: blob.headers, body: blob.body });
    expect(direct.statusCode).toBe(403);
    expect(await direct.body.text()).toContain("<Code>SignatureDoesNotMatch</Code>");
  });
});

describe("a proof aimed elsewhere causes no STS call", () => {
  it.each<[string, () => Promise<string>, RegExp]>([
    ["made for another gateway's audience", () => proof({ audience: "other-gateway" }), /does not name this gateway/],
    ["signed for a region the gateway does not allow", () => proof({ region: "us-west-2" }), /URL must be/],
    ["re-targeted at another host", async () => tamper(await proof(), (b) => (b.url = "https://sts.eu-west-1.amazonaws.com.evil.com/")), /URL must be/],
    ["re-targeted with a host header", async () => tamper(await proof(), (b) => (b.headers.host = "169.254.169.254")), /host header/],
    ["signed too long ago", () => proof({ at: Date.now() - 6 * 60_000 }), /expired or replayed/],
  ])("(%s)", async (_what, make, reason) => {
    const refusal = await refusalOf(verifierWith().verify(await make()));
    expect(refusal.code).toBe("UNAUTHENTICATED");
    expect(refusal.message).toMatch(reason);
    expect(sts.calls).toBe(0);
  });
});

describe("the identity cache", () => {
  it("makes 100 concurrent verifications of one new proof share a single STS call", async () => {
    const verifier = verifierWith();
    const header = await proof({ credentials: ROLE });
    const identities = await Promise.all(Array.from({ length: 100 }, () => verifier.verify(header)));
    expect(new Set(identities.map((identity) => identity.principal))).toEqual(new Set(["arn:aws:iam::111122223333:role/app-role"]));
    expect(sts.calls).toBe(1);
    for (let i = 0; i < 10; i++) await verifier.verify(header);
    expect(sts.calls).toBe(1);
  });

  it("refuses a cached proof once its window has passed, without calling STS (replay)", async () => {
    // x-amz-date has whole seconds: start on one, so the window ends exactly 300000ms later.
    let clock = Math.floor(Date.now() / 1000) * 1000;
    const verifier = verifierWith({}, () => clock);
    const header = await proof({ at: clock });
    await verifier.verify(header);
    clock += 299_999;
    await verifier.verify(header);
    clock += 2;
    expect((await refusalOf(verifier.verify(header))).message).toMatch(/expired or replayed/);
    expect(sts.calls).toBe(1);
  });

  it("asks STS again once cacheTtlMs has passed within the proof's window", async () => {
    let clock = Math.floor(Date.now() / 1000) * 1000;
    const verifier = verifierWith({ cacheTtlMs: 60_000 }, () => clock);
    const header = await proof({ at: clock });
    await verifier.verify(header);
    clock += 59_999;
    await verifier.verify(header);
    expect(sts.calls).toBe(1);
    clock += 1;
    await verifier.verify(header);
    expect(sts.calls).toBe(2);
  });

  it("keeps at most cacheMaxEntries identities, dropping the least recently used", async () => {
    const verifier = verifierWith({ cacheMaxEntries: 2 });
    const [a, b, c] = await Promise.all([0, 1, 2].map((i) => proof({ at: Date.now() - i * 1000 })));
    for (const header of [a, b, a, c]) await verifier.verify(header ?? "");
    expect(sts.calls).toBe(3);
    await verifier.verify(a ?? "");
    expect(sts.calls).toBe(3);
    await verifier.verify(b ?? "");
    expect(sts.calls).toBe(4);
  });
});

describe("when STS cannot answer", () => {
  it.each([
    [{ status: 500, code: "InternalFailure" }, /STS answered 500 InternalFailure/],
    [{ status: 503, code: "ServiceUnavailable" }, /STS answered 503 ServiceUnavailable/],
    [{ status: 400, code: "Throttling" }, /STS answered 400 Throttling/],
  ])("an answer %o is AUTHENTICATION_UNAVAILABLE (retryable) and not cached", async (fault, reason) => {
    const verifier = verifierWith();
    const header = await proof();
    sts.failWith(fault);
    const refusal = await refusalOf(verifier.verify(header));
    expect(refusal).toMatchObject({ code: "AUTHENTICATION_UNAVAILABLE", status: 503, retryable: true });
    expect(refusal.message).toMatch(reason);
    sts.failWith(undefined);
    expect((await verifier.verify(header)).arn).toBe(USER_ARN);
    expect(sts.calls).toBe(2);
  });

  it("a slow STS is AUTHENTICATION_UNAVAILABLE after checkTimeoutMs", async () => {
    sts.answerAfterMs(5000);
    const startedAt = performance.now();
    const refusal = await refusalOf(verifierWith({ checkTimeoutMs: 200 }).verify(await proof()));
    expect(refusal.code).toBe("AUTHENTICATION_UNAVAILABLE");
    expect(refusal.message).toMatch(/no answer within 200ms/);
    expect(performance.now() - startedAt).toBeLessThan(2000);
  });

  it("an unreachable STS is AUTHENTICATION_UNAVAILABLE", async () => {
    const verifier = verifierWith({ stsEndpoint: `http://127.0.0.1:${await unusedPort()}` });
    const refusal = await refusalOf(verifier.verify(await proof()));
    expect(refusal.code).toBe("AUTHENTICATION_UNAVAILABLE");
    expect(refusal.message).toMatch(/the call failed \(ECONNREFUSED\)/);
  });
});

describe("maxConcurrentChecks", () => {
  it("bounds the STS calls in flight; the others wait their turn", async () => {
    sts.answerAfterMs(100);
    const verifier = verifierWith({ maxConcurrentChecks: 2 });
    const headers = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => proof({ at: Date.now() - i * 1000 })));
    const identities = await Promise.all(headers.map((header) => verifier.verify(header)));
    expect(identities.every((identity) => identity.arn === USER_ARN)).toBe(true);
    expect(sts.calls).toBe(6);
    expect(sts.maxConcurrent).toBe(2);
  });

  it("counts the wait for a slot toward checkTimeoutMs", async () => {
    sts.answerAfterMs(400);
    const verifier = verifierWith({ maxConcurrentChecks: 1, checkTimeoutMs: 1000 });
    const headers = await Promise.all([0, 1, 2, 3].map((i) => proof({ at: Date.now() - i * 1000 })));
    const outcomes = await Promise.allSettled(headers.map((header) => verifier.verify(header)));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "fulfilled", "rejected", "rejected"]);
    for (const outcome of outcomes.slice(2)) {
      expect(outcome.status === "rejected" && outcome.reason instanceof GatewayError && outcome.reason.code).toBe("AUTHENTICATION_UNAVAILABLE");
    }
  });

  it("close() fails the waiting verifications and refuses new ones", async () => {
    sts.answerAfterMs(300);
    const verifier = verifierWith({ maxConcurrentChecks: 1 });
    const [first, second] = await Promise.all([0, 1].map((i) => proof({ at: Date.now() - i * 1000 })));
    const running = refusalOf(verifier.verify(first ?? ""));
    const waiting = refusalOf(verifier.verify(second ?? ""));
    await expect.poll(() => sts.calls).toBe(1);
    verifier.close();
    expect((await waiting).message).toMatch(/closed/);
    expect((await running).code).toBe("AUTHENTICATION_UNAVAILABLE");
    expect((await refusalOf(verifier.verify(first ?? ""))).message).toMatch(/closed/);
  });
});
