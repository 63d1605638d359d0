import { X509Certificate } from "node:crypto";
import { rootCertificates } from "node:tls";
import pg from "pg";
import { afterEach, describe, expect, it, vi } from "vitest";
import { withLogin } from "../engines/postgres/engine.js";
import { ManualClock } from "../clock.js";
import { DSQL_TOKEN_VALIDITY_SECONDS, dsqlSignerMinter, dsqlTokenCredentials, regionOfDsqlHost } from "./dsql-tokens.js";

const AWS_KEYS = { accessKeyId: "AKIAPOOLGATETEST0001", secretAccessKey: "poolgate-test-secret-access-key-0000000" };
const ENDPOINT = { host: "abcdefghijklmnopqrstuvwxyz.dsql.eu-west-1.on.aws", port: 5432 };
const T0 = Date.UTC(2031, 5, 1, 8, 0, 0);
const MINUTE = 60_000;

/** The query of a token (host/?Action=...&X-Amz-...), which is the presigned URL without its scheme. */
function parsed(token: string): { host: string; query: URLSearchParams } {
  const url = new URL(`https://${token}`);
  return { host: url.host, query: url.searchParams };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("Aurora DSQL tokens from @aws-sdk/dsql-signer", () => {
  it("signs DbConnectAdmin for the admin role and DbConnect for a custom role, for the endpoint and region, valid 900 s", async () => {
    vi.setSystemTime(T0);
    const mint = dsqlSignerMinter("eu-west-1", AWS_KEYS);
    const admin = parsed(await mint(ENDPOINT, "admin"));
    const custom = parsed(await mint(ENDPOINT, "poolgate_app"));

    expect(admin.host).toBe(ENDPOINT.host);
    expect(admin.query.get("Action")).toBe("DbConnectAdmin");
    expect(custom.query.get("Action")).toBe("DbConnect");
    for (const token of [admin, custom]) {
      expect(token.query.get("X-Amz-Algorithm")).toBe("AWS4-HMAC-SHA256");
      expect(token.query.get("X-Amz-Credential")).toBe(`${AWS_KEYS.accessKeyId}/20310601/eu-west-1/dsql/aws4_request`);
      expect(token.query.get("X-Amz-Date")).toBe("20310601T080000Z");
      expect(token.query.get("X-Amz-Expires")).toBe(String(DSQL_TOKEN_VALIDITY_SECONDS));
      expect(token.query.get("X-Amz-SignedHeaders")).toBe("host");
      expect(token.query.get("X-Amz-Signature")).toMatch(/^[0-9a-f]{64}$/);
    }
    // The role is not part of a DSQL token: the port neither.
    expect(await mint({ ...ENDPOINT, port: 6543 }, "poolgate_app")).toBe(await mint(ENDPOINT, "poolgate_app"));
  });

  it("reaches pg as the session's password exactly as signed", async () => {
    vi.setSystemTime(T0);
    const token = await dsqlSignerMinter("eu-west-1", AWS_KEYS)(ENDPOINT, "admin");
    const client = new pg.Client({ connectionString: withLogin(`postgres://${ENDPOINT.host}:5432/postgres`, { user: "admin", password: token }) });
    expect(client.user).toBe("admin");
    expect(client.password).toBe(token);
  });

  it("reads the region from a cluster endpoint", () => {
    expect(regionOfDsqlHost(ENDPOINT.host)).toBe("eu-west-1");
    expect(regionOfDsqlHost("abc.dsql-fnh4.us-east-1.on.aws")).toBe("us-east-1");
    expect(regionOfDsqlHost("app.cluster-abc.us-east-1.rds.amazonaws.com")).toBeUndefined();
    expect(regionOfDsqlHost("127.0.0.1")).toBeUndefined();
  });

  it("mints before the first session, reuses the token for ten minutes, then mints a fresh one for new sessions", async () => {
    vi.setSystemTime(T0);
    const clock = new ManualClock(T0);
    const signer = vi.fn(dsqlSignerMinter("eu-west-1", AWS_KEYS));
    const credentials = dsqlTokenCredentials("admin", signer, ENDPOINT, { clock });

    await credentials.prepare();
    const first = await credentials.current(ENDPOINT);
    expect(signer).toHaveBeenCalledTimes(1);
    expect(parsed(first.password).query.get("X-Amz-Date")).toBe("20310601T080000Z");

    clock.advance(10 * MINUTE - 1);
    vi.setSystemTime(T0 + 10 * MINUTE - 1);
    expect((await credentials.current(ENDPOINT)).password).toBe(first.password);
    expect(signer).toHaveBeenCalledTimes(1);

    // Five minutes before the token's 15 run out, a new session gets a newly signed one.
    clock.advance(1);
    vi.setSystemTime(T0 + 10 * MINUTE);
    const second = await credentials.current(ENDPOINT);
    expect(signer).toHaveBeenCalledTimes(2);
    expect(second.password).not.toBe(first.password);
    expect(parsed(second.password).query.get("X-Amz-Date")).toBe("20310601T081000Z");
    // The password never shows in logs or JSON.
    expect(JSON.stringify(second)).not.toContain("X-Amz-Signature");
  });

  it("mints again after the database refused a token, once for a burst of refusals", async () => {
    vi.setSystemTime(T0);
    const clock = new ManualClock(T0);
    const signer = vi.fn(dsqlSignerMinter("eu-west-1", AWS_KEYS));
    const credentials = dsqlTokenCredentials("poolgate_app", signer, ENDPOINT, { clock });
    const refused = await credentials.current(ENDPOINT);

    vi.setSystemTime(T0 + 2000);
    const answers = await Promise.all([1, 2, 3].map(() => credentials.afterAuthenticationFailure(refused, ENDPOINT)));
    expect(answers).toEqual([true, true, true]);
    expect(signer).toHaveBeenCalledTimes(2);
    expect((await credentials.current(ENDPOINT)).password).not.toBe(refused.password);
  });
});

describe("TLS to Aurora DSQL", () => {
  it("is verified against Node's own trust store by default, which holds DSQL's Amazon Root CA 1", () => {
    const subjects = rootCertificates.map((pem) => new X509Certificate(pem).subject);
    expect(subjects.some((subject) => subject.includes("CN=Amazon Root CA 1"))).toBe(true);
  });
});
