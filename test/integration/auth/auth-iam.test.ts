/**
 * IAM caller authentication end to end, on the real local PostgreSQL: a Lambda-like caller signs a
 * GetCallerIdentity proof with the client SDK's iamAuth (and the AWS SDK's Data API client with the
 * one-line addPoolgateAuth), the gateway checks it and replays it to a local STS stand-in that really
 * verifies SigV4, and the principal found (the role, its session name stripped) gets its grants.
 * Replayed, expired, re-targeted and tampered proofs are refused.
 */
import { ExecuteStatementCommand } from "@aws-sdk/client-rds-data";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { iamAuth } from "../../../client/iam-auth.js";
import { createClient, PoolgateError } from "../../../client/index.js";
import { dataApiClient } from "../../support/data-api-client.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";
import { startStsStandIn, type StsStandIn } from "../../support/sts-standin.js";

const AUDIENCE = "poolgate-e2e";
const REGION = "eu-west-1";
const ACCOUNT = "111122223333";
const APP = { accessKeyId: "ASIAPOOLGATEAPP00001", secretAccessKey: "app-secret/EXAMPLE+0001", sessionToken: "IQoJb3JpZ2luX2VjEXAMPLEapp" };
const REPORTS = { accessKeyId: "ASIAPOOLGATEREP00001", secretAccessKey: "reports-secret/EXAMPLE+01", sessionToken: "IQoJb3JpZ2luX2VjEXAMPLErep" };
const NOBODY = { accessKeyId: "ASIAPOOLGATENOB00001", secretAccessKey: "nobody-secret/EXAMPLE+001", sessionToken: "IQoJb3JpZ2luX2VjEXAMPLEnob" };
/** A role of another account, granted through "*": auth.iam.accounts must keep it out. */
const FOREIGN = { accessKeyId: "ASIAPOOLGATEFOR00001", secretAccessKey: "foreign-secret/EXAMPLE+01", sessionToken: "IQoJb3JpZ2luX2VjEXAMPLEfor" };
const ARNS = { resourceArn: "arn:aws:rds:eu-west-1:111122223333:cluster:app", secretArn: "arn:aws:secretsmanager:eu-west-1:111122223333:secret:app" };

function decode(header: string): { method: string; url: string; headers: Record<string, string>; body: string } {
  return JSON.parse(Buffer.from(header.replace(/^AWS-STS /, ""), "base64").toString("utf8")) as ReturnType<typeof decode>;
}
const encode = (proof: ReturnType<typeof decode>) => `AWS-STS ${Buffer.from(JSON.stringify(proof)).toString("base64")}`;

describe("IAM caller authentication through the gateway", () => {
  let db: TestDatabase;
  let sts: StsStandIn;
  let gateway: TestGateway;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.admin.query("create table visits (id serial primary key, who text)");
    sts = await startStsStandIn([
      { ...APP, arn: `arn:aws:sts::${ACCOUNT}:assumed-role/notes-api/notes-api-fn` },
      { ...REPORTS, arn: `arn:aws:sts::${ACCOUNT}:assumed-role/reports/reports-fn` },
      { ...NOBODY, arn: `arn:aws:sts::${ACCOUNT}:assumed-role/nobody/nobody-fn` },
      { ...FOREIGN, arn: "arn:aws:sts::999988887777:assumed-role/notes-api/notes-api-fn" },
    ]);
    gateway = await startTestGateway({
      clusters: { default: { writerUrl: db.url } },
      auth: {
        iam: { audience: AUDIENCE, regions: [REGION], stsEndpoint: sts.url, accounts: [ACCOUNT] },
        principals: {
          // A role path in the configuration: assumed-role ARNs carry none, and still match.
          [`arn:aws:iam::${ACCOUNT}:role/service/notes-api`]: { clusters: { default: "read-write" } },
          [`arn:aws:iam::${ACCOUNT}:role/reports`]: { clusters: { default: "read-only" } },
        },
      },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await sts?.close();
    await db?.drop();
  });

  it("serves the client SDK signing with iamAuth, one STS call for many requests", async () => {
    sts.reset();
    const client = createClient({ url: gateway.baseUrl, sign: iamAuth({ audience: AUDIENCE, region: REGION, credentials: APP }) });
    try {
      for (let i = 0; i < 20; i++) await client.query("insert into visits (who) values ($1)", ["notes-api"]);
      const { rows } = await client.query<{ n: string }>("select count(*) as n from visits");
      expect(rows).toEqual([{ n: "20" }]);
    } finally {
      await client.close();
    }
    expect(sts.calls).toBe(1);
    expect(sts.hostsSeen).toEqual([`sts.${REGION}.amazonaws.com`]);
  });

  it("refuses an identity of an AWS account that auth.iam.accounts does not list, even with a role name that is granted", async () => {
    const client = createClient({ url: gateway.baseUrl, sign: iamAuth({ audience: AUDIENCE, region: REGION, credentials: FOREIGN }), retry: { maxAttempts: 1 } });
    try {
      const refused = await client.query("select 1").catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(PoolgateError);
      expect((refused as PoolgateError).code).toBe("UNAUTHENTICATED");
      expect((refused as PoolgateError).message).toContain("999988887777");
    } finally {
      await client.close();
    }
  });

  it("serves the AWS SDK's Data API client with the one-line middleware", async () => {
    const client = dataApiClient(gateway.baseUrl, { region: REGION, auth: iamAuth({ audience: AUDIENCE, region: REGION, credentials: APP }) });
    const answer = await client.send(new ExecuteStatementCommand({ ...ARNS, sql: "select count(*) from visits" }));
    expect(answer.records?.[0]?.[0]).toEqual({ longValue: 20 });
    client.destroy();
  });

  it("applies the principal's grants: read-only for one role, nothing for an unlisted one", async () => {
    const reports = createClient({ url: gateway.baseUrl, sign: iamAuth({ audience: AUDIENCE, region: REGION, credentials: REPORTS }), retry: { maxAttempts: 1 } });
    const nobody = createClient({ url: gateway.baseUrl, sign: iamAuth({ audience: AUDIENCE, region: REGION, credentials: NOBODY }), retry: { maxAttempts: 1 } });
    try {
      expect((await reports.query("select count(*) as n from visits")).rows).toEqual([{ n: "20" }]);
      await expect(reports.query("insert into visits (who) values ('reports')")).rejects.toMatchObject({ code: "FORBIDDEN", status: 403 });
      const refused = await nobody.query("select 1").catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(PoolgateError);
      expect((refused as PoolgateError).code).toBe("FORBIDDEN");
      expect((refused as PoolgateError).message).toContain(`arn:aws:iam::${ACCOUNT}:role/nobody`);
    } finally {
      await reports.close();
      await nobody.close();
    }
  });

  it("refuses replayed, expired, re-targeted and tampered proofs", async () => {
    const fresh = await iamAuth({ audience: AUDIENCE, region: REGION, credentials: APP, reuseMs: 0 }).header();
    const query = (header: string) => gateway.post("/v1/query", { sql: "select 1" }, { "x-poolgate-auth": header });
    expect((await query(fresh)).status).toBe(200);

    sts.reset();
    const refusals: [string, string][] = [
      // Signed 10 minutes ago and replayed now: outside the 5-minute window.
      [await iamAuth({ audience: AUDIENCE, region: REGION, credentials: APP, now: () => Date.now() - 600_000 }).header(), "replayed"],
      // Signed for another gateway.
      [await iamAuth({ audience: "another-gateway", region: REGION, credentials: APP }).header(), "re-targeted (audience)"],
      // Signed for a region this gateway does not accept, and for a host that is not STS.
      [await iamAuth({ audience: AUDIENCE, region: "us-west-2", credentials: APP }).header(), "re-targeted (region)"],
      [await iamAuth({ audience: AUDIENCE, region: REGION, credentials: APP, stsHost: "sts.eu-west-1.amazonaws.com.evil.example" }).header(), "re-targeted (host)"],
    ];
    for (const [header, what] of refusals) {
      const answer = await query(header);
      expect(answer.status, what).toBe(401);
      expect(answer.body.error.code, what).toBe("UNAUTHENTICATED");
    }
    // None of those was worth asking STS about.
    expect(sts.calls).toBe(0);

    const tampered = decode(fresh);
    const signature = /Signature=([0-9a-f]{64})/.exec(tampered.headers.authorization ?? "")?.[1] ?? "";
    tampered.headers.authorization = (tampered.headers.authorization ?? "").replace(signature, `${signature.slice(0, 63)}${signature.endsWith("0") ? "1" : "0"}`);
    const forged = encode(tampered);
    const answer = await query(forged);
    expect(answer.status).toBe(401);
    expect(answer.body.error.message).toContain("SignatureDoesNotMatch");
    // STS refused it: the gateway asked once, and caches no refusal in its favour.
    expect(sts.calls).toBe(1);
    expect(JSON.stringify(answer.body)).not.toContain(signature);
  });

  it("answers AUTHENTICATION_UNAVAILABLE, retryable, when STS fails, and nothing runs", async () => {
    sts.failWith({ status: 503, code: "ServiceUnavailable" });
    try {
      // Signed at a second no earlier proof used: SigV4 is deterministic, and a proof seen before is cached.
      const proof = await iamAuth({ audience: AUDIENCE, region: REGION, credentials: APP, now: () => Date.now() - 7000 }).header();
      const answer = await gateway.post("/v1/query", { sql: "insert into visits (who) values ('during outage')" }, { "x-poolgate-auth": proof });
      expect(answer.status).toBe(503);
      expect(answer.body.error).toMatchObject({ code: "AUTHENTICATION_UNAVAILABLE", retryable: true });
      expect(answer.headers.get("retry-after")).toBe("1");
    } finally {
      sts.failWith(undefined);
    }
    const { rows } = await db.admin.query("select count(*)::int as n from visits where who = 'during outage'");
    expect(rows).toEqual([{ n: 0 }]);
  });
});
