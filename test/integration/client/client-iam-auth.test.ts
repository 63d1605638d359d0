/**
 * The client's IAM prover: its SHA-256 adapter against AWS's published SigV4 example, the proofs it
 * makes against the gateway's checks, its reuse and refresh, and the AWS SDK middleware — a real
 * RDSDataClient sending to a local HTTP server, whose recorded header is then verified against the
 * STS stand-in.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ExecuteStatementCommand, RDSDataClient } from "@aws-sdk/client-rds-data";
import { SignatureV4 } from "@smithy/signature-v4";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addPoolgateAuth, type AwsCredentials, iamAuth, NodeSha256 } from "../../../client/iam-auth.js";
import { checkProof, type IamAuthSettings } from "../../../gateway/auth/sts-proof.js";
import { StsVerifier } from "../../../gateway/auth/sts-verifier.js";
import { authConfigSchema } from "../../../gateway/config/schema.js";
import { startStsStandIn, type StsStandIn } from "../../support/sts-standin.js";

const AUDIENCE = "poolgate-test";
const ROLE = { accessKeyId: "ASIAPOOLGATEROLE0002", secretAccessKey: "role-secret-key/EXAMPLE+0002", sessionToken: "IQoJb3JpZ2luX2VjEXAMPLE//token2=" };
const ROLE_ARN = "arn:aws:sts::444455556666:assumed-role/data-api-role/data-api-function";

function settingsWith(stsEndpoint?: string): IamAuthSettings {
  const iam = authConfigSchema.parse({ iam: { audience: AUDIENCE, regions: ["eu-west-1"], ...(stsEndpoint === undefined ? {} : { stsEndpoint }) } }).iam;
  if (!iam) throw new Error("no iam settings");
  return iam;
}

function decode(header: string): { method: string; url: string; headers: Record<string, string>; body: string } {
  return JSON.parse(Buffer.from(header.slice("AWS-STS ".length), "base64url").toString("utf8"));
}

/** A credentials provider that counts its calls. */
function countingProvider(credentials: () => AwsCredentials): { provider: () => Promise<AwsCredentials>; calls: () => number } {
  let calls = 0;
  return {
    provider: async () => {
      calls++;
      return credentials();
    },
    calls: () => calls,
  };
}

describe("NodeSha256", () => {
  it("with smithy's SignatureV4 reproduces AWS's documented SigV4 example (IAM ListUsers)", async () => {
    const signer = new SignatureV4({
      service: "iam",
      region: "us-east-1",
      credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" },
      sha256: NodeSha256,
      applyChecksum: false,
    });
    const signed = await signer.sign(
      {
        method: "GET",
        protocol: "https:",
        hostname: "iam.amazonaws.com",
        path: "/",
        query: { Action: "ListUsers", Version: "2010-05-08" },
        headers: { host: "iam.amazonaws.com", "content-type": "application/x-www-form-urlencoded; charset=utf-8" },
      },
      { signingDate: new Date("2015-08-30T12:36:00Z") },
    );
    expect(signed.headers.authorization).toBe(
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
    );
  });
});

describe("iamAuth", () => {
  it("makes a proof in the wire shape that passes the gateway's local checks", async () => {
    const now = Date.UTC(2026, 0, 15, 12, 0, 0);
    const header = await iamAuth({ audience: AUDIENCE, region: "eu-west-1", credentials: ROLE, now: () => now }).header();
    expect(header).toMatch(/^AWS-STS [A-Za-z0-9_-]+$/);
    const proof = decode(header);
    expect(proof).toMatchObject({ method: "POST", url: "https://sts.eu-west-1.amazonaws.com/", body: "Action=GetCallerIdentity&Version=2011-06-15" });
    expect(proof.headers).toMatchObject({ host: "sts.eu-west-1.amazonaws.com", "x-poolgate-server-id": AUDIENCE, "x-amz-date": "20260115T120000Z", "x-amz-security-token": ROLE.sessionToken });
    expect(proof.headers.authorization).toMatch(/SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;x-poolgate-server-id, /);
    expect(checkProof(header, settingsWith(), now)).toMatchObject({ host: "sts.eu-west-1.amazonaws.com", region: "eu-west-1", signedAtMs: now });
    expect(header.length).toBeLessThan(2048);
  });

  it("reuses a proof until reuseMs has passed, then signs a new one", async () => {
    let clock = Date.UTC(2026, 0, 15, 12, 0, 0);
    const auth = iamAuth({ audience: AUDIENCE, region: "eu-west-1", credentials: ROLE, reuseMs: 60_000, now: () => clock });
    const first = await auth.header();
    clock += 59_999;
    expect(await auth.header()).toBe(first);
    clock += 1;
    const second = await auth.header();
    expect(second).not.toBe(first);
    expect(decode(second).headers["x-amz-date"]).toBe("20260115T120100Z");
  });

  it("lets concurrent requests share one signing and one credentials fetch", async () => {
    const credentials = countingProvider(() => ROLE);
    const auth = iamAuth({ audience: AUDIENCE, region: "eu-west-1", credentials: credentials.provider });
    const headers = await Promise.all(Array.from({ length: 20 }, () => auth.header()));
    expect(new Set(headers).size).toBe(1);
    expect(credentials.calls()).toBe(1);
  });

  it("signs again, with fresh credentials, a minute before the credentials expire", async () => {
    let clock = Date.UTC(2026, 0, 15, 12, 0, 0);
    const credentials = countingProvider(() => ({ ...ROLE, expiration: new Date(clock + 90_000) }));
    const auth = iamAuth({ audience: AUDIENCE, region: "eu-west-1", credentials: credentials.provider, now: () => clock });
    const first = await auth.header();
    clock += 29_999;
    expect(await auth.header()).toBe(first);
    clock += 1;
    expect(await auth.header()).not.toBe(first);
    expect(credentials.calls()).toBe(2);
  });

  it("does not keep a failed signing: the next request tries again", async () => {
    let fail = true;
    const auth = iamAuth({
      audience: AUDIENCE,
      region: "eu-west-1",
      credentials: async () => {
        if (fail) throw new Error("no credentials yet");
        return ROLE;
      },
    });
    await expect(auth.header()).rejects.toThrow(/no credentials yet/);
    fail = false;
    expect(await auth.header()).toMatch(/^AWS-STS /);
  });

  it("signs for AWS_REGION by default and refuses to start without a region", async () => {
    const saved = process.env.AWS_REGION;
    try {
      process.env.AWS_REGION = "eu-west-1";
      expect(decode(await iamAuth({ audience: AUDIENCE, credentials: ROLE }).header()).url).toBe("https://sts.eu-west-1.amazonaws.com/");
      delete process.env.AWS_REGION;
      expect(() => iamAuth({ audience: AUDIENCE, credentials: ROLE })).toThrow(/no region: pass options.region or set AWS_REGION/);
    } finally {
      if (saved === undefined) delete process.env.AWS_REGION;
      else process.env.AWS_REGION = saved;
    }
  });

  it("takes its credentials from the SDK's default chain when given none", async () => {
    const saved = { ...process.env };
    try {
      Object.assign(process.env, { AWS_ACCESS_KEY_ID: ROLE.accessKeyId, AWS_SECRET_ACCESS_KEY: ROLE.secretAccessKey, AWS_SESSION_TOKEN: ROLE.sessionToken });
      const proof = decode(await iamAuth({ audience: AUDIENCE, region: "eu-west-1" }).header());
      expect(proof.headers.authorization).toContain(`Credential=${ROLE.accessKeyId}/`);
      expect(proof.headers["x-amz-security-token"]).toBe(ROLE.sessionToken);
    } finally {
      for (const name of ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
  });

  it("signs for the China partition's STS host in a cn- region", async () => {
    expect(decode(await iamAuth({ audience: AUDIENCE, region: "cn-north-1", credentials: ROLE }).header()).url).toBe("https://sts.cn-north-1.amazonaws.com.cn/");
  });

  it("is a sign hook for the Poolgate client, adding x-poolgate-auth", async () => {
    const auth = iamAuth({ audience: AUDIENCE, region: "eu-west-1", credentials: ROLE });
    const added = await auth({ method: "POST", url: "http://gateway/v1/query", headers: {}, body: "{}" });
    expect(added).toEqual({ "x-poolgate-auth": await auth.header() });
  });
});

describe("addPoolgateAuth on an RDSDataClient", () => {
  let sts: StsStandIn;
  let dataApi: http.Server;
  const received: http.IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    sts = await startStsStandIn([{ ...ROLE, arn: ROLE_ARN }]);
    // Simulates the gateway's Data API surface: records the headers, answers an empty result.
    dataApi = http.createServer((req, res) => {
      received.push(req.headers);
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ numberOfRecordsUpdated: 0, records: [] })));
    });
    await new Promise<void>((resolve) => dataApi.listen(0, "127.0.0.1", resolve));
  });

  afterAll(async () => {
    await sts?.close();
    dataApi?.closeAllConnections();
    await new Promise<void>((resolve) => (dataApi ? dataApi.close(() => resolve()) : resolve()));
  });

  it("sends x-poolgate-auth with every request, and the header verifies against STS", async () => {
    const client = new RDSDataClient({
      region: "eu-west-1",
      endpoint: `http://127.0.0.1:${(dataApi.address() as AddressInfo).port}`,
      credentials: { accessKeyId: "x", secretAccessKey: "y" },
      maxAttempts: 1,
    });
    addPoolgateAuth(client, iamAuth({ audience: AUDIENCE, region: "eu-west-1", credentials: ROLE }));
    const command = () => new ExecuteStatementCommand({ resourceArn: "arn:aws:rds:eu-west-1:444455556666:cluster:db", secretArn: "arn:aws:secretsmanager:eu-west-1:444455556666:secret:db", sql: "select 1" });
    try {
      expect((await client.send(command())).records).toEqual([]);
      await client.send(command());
    } finally {
      client.destroy();
    }
    expect(received).toHaveLength(2);
    const header = received[0]?.["x-poolgate-auth"];
    expect(typeof header).toBe("string");
    expect(received[1]?.["x-poolgate-auth"]).toBe(header);
    const verifier = new StsVerifier(settingsWith(sts.url));
    try {
      expect(await verifier.verify(String(header))).toMatchObject({ arn: ROLE_ARN, principal: "arn:aws:iam::444455556666:role/data-api-role", account: "444455556666" });
    } finally {
      verifier.close();
    }
  });

  it("refuses to be added twice to one client (the SDK's duplicate-name check)", () => {
    const client = new RDSDataClient({ region: "eu-west-1", credentials: { accessKeyId: "x", secretAccessKey: "y" } });
    const auth = iamAuth({ audience: AUDIENCE, region: "eu-west-1", credentials: ROLE });
    addPoolgateAuth(client, auth);
    expect(() => addPoolgateAuth(client, auth)).toThrow(/poolgateAuth/);
    client.destroy();
  });
});
