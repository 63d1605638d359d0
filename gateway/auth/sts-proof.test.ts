import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { authConfigSchema } from "../config/schema.js";
import { GatewayError } from "../errors.js";
import { allowedStsHosts, checkProof, GET_CALLER_IDENTITY_BODY, type IamAuthSettings } from "./sts-proof.js";

function iamSettings(regions: string[]): IamAuthSettings {
  const iam = authConfigSchema.parse({ iam: { audience: "poolgate-test", regions } }).iam;
  if (!iam) throw new Error("the schema dropped the iam section");
  return iam;
}
const settings = iamSettings(["eu-west-1", "us-east-1"]);

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
const AMZ_DATE = "20260115T120000Z";
const SIGNATURE = "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7";
const SIGNED = "content-type;host;x-amz-date;x-poolgate-server-id";

function authorization({ scope = "20260115/eu-west-1/sts", signed = SIGNED, signature = SIGNATURE } = {}): string {
  return `AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/${scope}/aws4_request, SignedHeaders=${signed}, Signature=${signature}`;
}

interface Draft {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  [extra: string]: unknown;
}

/** A well-formed proof for eu-west-1, signed at NOW (the signature is not checked locally). */
function draft(): Draft {
  return {
    method: "POST",
    url: "https://sts.eu-west-1.amazonaws.com/",
    headers: {
      host: "sts.eu-west-1.amazonaws.com",
      "x-amz-date": AMZ_DATE,
      "content-type": "application/x-www-form-urlencoded; charset=utf-8",
      "x-poolgate-server-id": "poolgate-test",
      authorization: authorization(),
    },
    body: GET_CALLER_IDENTITY_BODY,
  };
}

function encode(value: unknown, encoding: "base64url" | "base64" = "base64url"): string {
  return `AWS-STS ${Buffer.from(JSON.stringify(value)).toString(encoding)}`;
}

function refusalOf(header: string, nowMs = NOW): GatewayError {
  try {
    checkProof(header, settings, nowMs);
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error("the proof was accepted");
}

describe("checkProof accepts", () => {
  it("a well-formed proof, returning what to forward and the replay window", () => {
    const checked = checkProof(encode(draft()), settings, NOW);
    expect(checked).toEqual({
      host: "sts.eu-west-1.amazonaws.com",
      region: "eu-west-1",
      forwardHeaders: draft().headers,
      body: GET_CALLER_IDENTITY_BODY,
      signatureDigest: createHash("sha256").update(SIGNATURE).digest("hex"),
      signedAtMs: NOW,
      validUntilMs: NOW + settings.maxClockSkewMs,
    });
    expect(checked.signatureDigest).not.toBe(SIGNATURE);
  });

  it("standard base64 as well as base64url", () => {
    expect(checkProof(encode(draft(), "base64"), settings, NOW).host).toBe("sts.eu-west-1.amazonaws.com");
  });

  it("header names in any case, forwarding them in lower case", () => {
    const proof = draft();
    proof.headers = Object.fromEntries(Object.entries(proof.headers).map(([name, value]) => [name.toUpperCase(), value]));
    expect(checkProof(encode(proof), settings, NOW).forwardHeaders).toEqual(draft().headers);
  });

  it("a signed session token, content-length and payload hash", () => {
    const proof = draft();
    proof.headers["x-amz-security-token"] = "IQoJb3JpZ2luX2VjEXAMPLE//token+/=";
    proof.headers["content-length"] = "43";
    proof.headers["x-amz-content-sha256"] = createHash("sha256").update(GET_CALLER_IDENTITY_BODY).digest("hex");
    proof.headers.authorization = authorization({ signed: "content-length;content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token;x-poolgate-server-id" });
    expect(checkProof(encode(proof), settings, NOW).forwardHeaders["x-amz-security-token"]).toBe("IQoJb3JpZ2luX2VjEXAMPLE//token+/=");
  });

  it("the global STS host, which signs as us-east-1, when us-east-1 is allowed", () => {
    const proof = draft();
    proof.url = "https://sts.amazonaws.com/";
    proof.headers.host = "sts.amazonaws.com";
    proof.headers.authorization = authorization({ scope: "20260115/us-east-1/sts" });
    expect(checkProof(encode(proof), settings, NOW)).toMatchObject({ host: "sts.amazonaws.com", region: "us-east-1" });
  });

  it("a proof signed at the edge of the allowed clock skew, either way", () => {
    expect(checkProof(encode(draft()), settings, NOW + settings.maxClockSkewMs).signedAtMs).toBe(NOW);
    expect(checkProof(encode(draft()), settings, NOW - settings.maxClockSkewMs).signedAtMs).toBe(NOW);
  });
});

describe("the STS host allow-list", () => {
  it("has each region's host, the global one only with us-east-1, and .com.cn in China", () => {
    expect([...allowedStsHosts(iamSettings(["eu-west-1"])).keys()]).toEqual(["sts.eu-west-1.amazonaws.com"]);
    expect([...allowedStsHosts(iamSettings(["us-east-1", "cn-north-1"]))]).toEqual([
      ["sts.us-east-1.amazonaws.com", "us-east-1"],
      ["sts.amazonaws.com", "us-east-1"],
      ["sts.cn-north-1.amazonaws.com.cn", "cn-north-1"],
    ]);
  });
});

describe("checkProof refuses", () => {
  it.each([
    ["another scheme", `Bearer ${encode(draft()).slice(8)}`, /must be "AWS-STS/],
    ["the scheme in another case", `aws-sts ${encode(draft()).slice(8)}`, /must be "AWS-STS/],
    ["a proof that is not base64", "AWS-STS {not base64}", /not base64/],
    ["a proof that is not UTF-8", `AWS-STS ${Buffer.from([0xff, 0xfe, 0xfd]).toString("base64")}`, /not UTF-8/],
    ["a proof that is not JSON", `AWS-STS ${Buffer.from("method=POST").toString("base64")}`, /not JSON/],
    ["a JSON proof that is not an object", encode(["POST"]), /must be \{method, url, headers, body\}/],
    ["an oversize header", `AWS-STS ${"A".repeat(9000)}`, /longer than 8192/],
  ])("%s", (_what, header, reason) => {
    const refusal = refusalOf(header);
    expect(refusal.code).toBe("UNAUTHENTICATED");
    expect(refusal.status).toBe(401);
    expect(refusal.message).toMatch(reason);
  });

  it.each<[string, (proof: Draft) => void, RegExp]>([
    ["an extra field", (p) => (p.extra = 1), /unrecognized key/i],
    ["a missing body", (p) => Reflect.deleteProperty(p, "body"), /body/],
    ["a header value with a line break", (p) => (p.headers["x-poolgate-server-id"] = "poolgate-test\r\nx: y"), /printable ASCII/],
    ["a header name that is not a token", (p) => (p.headers["x poolgate"] = "1"), /headers/],
    ["another method", (p) => (p.method = "GET"), /method must be POST/],
    ["a lower-case method", (p) => (p.method = "post"), /method must be POST/],
    ["another body", (p) => (p.body = "Action=GetCallerIdentity&Version=2011-06-15&x=1"), /body must be exactly/],
    ["the parameters reordered", (p) => (p.body = "Version=2011-06-15&Action=GetCallerIdentity"), /body must be exactly/],
    ["a host header other than the URL's", (p) => (p.headers.host = "sts.us-east-1.amazonaws.com"), /host header must equal/],
    ["a header outside the allow-list", (p) => (p.headers["x-forwarded-host"] = "evil.example.com"), /header x-forwarded-host is not allowed/],
    ["a header given twice in two cases", (p) => (p.headers.Host = "sts.eu-west-1.amazonaws.com"), /header host appears twice/],
    ["a proof made for another gateway", (p) => (p.headers["x-poolgate-server-id"] = "other-gateway"), /does not name this gateway/],
    ["a proof without an audience", (p) => delete p.headers["x-poolgate-server-id"], /does not name this gateway/],
    ["a form content-type other than the form's", (p) => (p.headers["content-type"] = "application/json"), /content-type/],
    ["a content-length that does not match", (p) => (p.headers["content-length"] = "44"), /content-length/],
    ["a payload hash of another body", (p) => (p.headers["x-amz-content-sha256"] = "UNSIGNED-PAYLOAD"), /x-amz-content-sha256/],
    ["no x-amz-date", (p) => delete p.headers["x-amz-date"], /x-amz-date must be present/],
    ["an x-amz-date in another format", (p) => (p.headers["x-amz-date"] = "2026-01-15T12:00:00Z"), /YYYYMMDDTHHMMSSZ/],
    ["an impossible x-amz-date", (p) => (p.headers["x-amz-date"] = "20260231T120000Z"), /not a valid date/],
    ["no authorization", (p) => delete p.headers.authorization, /authorization must be AWS4-HMAC-SHA256/],
    ["another signing algorithm", (p) => (p.headers.authorization = authorization().replace("AWS4-HMAC-SHA256", "AWS4-ECDSA-P256-SHA256")), /authorization must be/],
    ["a short signature", (p) => (p.headers.authorization = authorization({ signature: "abc123" })), /authorization must be/],
    ["an upper-case signature", (p) => (p.headers.authorization = authorization({ signature: SIGNATURE.toUpperCase() })), /authorization must be/],
    ["trailing text in authorization", (p) => (p.headers.authorization = `${authorization()}, Extra=1`), /authorization must be/],
    ["a scope for another service", (p) => (p.headers.authorization = authorization({ scope: "20260115/eu-west-1/iam" })), /sts service/],
    ["a scope for another region", (p) => (p.headers.authorization = authorization({ scope: "20260115/us-east-1/sts" })), /region must be eu-west-1/],
    ["a scope for another day", (p) => (p.headers.authorization = authorization({ scope: "20260114/eu-west-1/sts" })), /x-amz-date's day/],
    ["host not signed", (p) => (p.headers.authorization = authorization({ signed: "content-type;x-amz-date;x-poolgate-server-id" })), /host must be signed/],
    ["x-amz-date not signed", (p) => (p.headers.authorization = authorization({ signed: "content-type;host;x-poolgate-server-id" })), /x-amz-date must be signed/],
    ["the audience not signed", (p) => (p.headers.authorization = authorization({ signed: "content-type;host;x-amz-date" })), /x-poolgate-server-id must be signed/],
    ["a signed header that is absent", (p) => (p.headers.authorization = authorization({ signed: "content-length;content-type;host;x-amz-date;x-poolgate-server-id" })), /signed header content-length is missing/],
    ["authorization listed as signed", (p) => (p.headers.authorization = authorization({ signed: "authorization;content-type;host;x-amz-date;x-poolgate-server-id" })), /authorization cannot be a signed header/],
    ["an unsorted signed-header list", (p) => (p.headers.authorization = authorization({ signed: "host;content-type;x-amz-date;x-poolgate-server-id" })), /sorted/],
    ["an unsigned session token", (p) => (p.headers["x-amz-security-token"] = "IQoJb3JpZ2luX2VjEXAMPLE"), /x-amz-security-token must be signed/],
  ])("%s", (_what, mutate, reason) => {
    const proof = draft();
    mutate(proof);
    const refusal = refusalOf(encode(proof));
    expect(refusal.code).toBe("UNAUTHENTICATED");
    expect(refusal.message).toMatch(reason);
    expect(refusal.message).not.toContain(SIGNATURE);
  });

  it.each([
    "http://sts.eu-west-1.amazonaws.com/",
    "https://sts.eu-west-2.amazonaws.com/",
    "https://sts.eu-west-1.amazonaws.com.evil.com/",
    "https://sts.eu-west-1.amazonaws.com.cn/",
    "https://evil.com/sts.eu-west-1.amazonaws.com/",
    "https://xsts.eu-west-1.amazonaws.com/",
    "https://STS.EU-WEST-1.AMAZONAWS.COM/",
    "https://sts.eu-west-1.amazonaws.com.:443/",
    "https://sts.eu-west-1.amazonaws.com:443/",
    "https://sts.eu-west-1.amazonaws.com:8080/",
    "https://user@sts.eu-west-1.amazonaws.com/",
    "https://sts.eu-west-1.amazonaws.com@evil.com/",
    "https://sts.eu-west-1.amazonaws.com",
    "https://sts.eu-west-1.amazonaws.com/x",
    "https://sts.eu-west-1.amazonaws.com//",
    "https://sts.eu-west-1.amazonaws.com/?Action=GetCallerIdentity",
    "https://sts.eu-west-1.amazonaws.com/#x",
    "https://127.0.0.1/",
    "https://169.254.169.254/",
  ])("the URL %s, whatever the host header says", (url) => {
    const proof = draft();
    proof.url = url;
    expect(refusalOf(encode(proof)).message).toMatch(/URL must be https:\/\/<host>\/ with host one of sts\.eu-west-1\.amazonaws\.com, sts\.us-east-1\.amazonaws\.com, sts\.amazonaws\.com/);
  });

  it("the global STS host when us-east-1 is not allowed", () => {
    const proof = draft();
    proof.url = "https://sts.amazonaws.com/";
    proof.headers.host = "sts.amazonaws.com";
    proof.headers.authorization = authorization({ scope: "20260115/us-east-1/sts" });
    expect(() => checkProof(encode(proof), iamSettings(["eu-west-1"]), NOW)).toThrow(/URL must be/);
  });

  it("a proof signed longer ago than the allowed skew (replayed)", () => {
    expect(refusalOf(encode(draft()), NOW + settings.maxClockSkewMs + 1000).message).toMatch(/expired or replayed/);
  });

  it("a proof signed further in the future than the allowed skew", () => {
    expect(refusalOf(encode(draft()), NOW - settings.maxClockSkewMs - 1000).message).toMatch(/in the future/);
  });
});
