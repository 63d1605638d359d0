/**
 * Database credentials and TLS end to end, on a temporary PostgreSQL server that asks for passwords
 * (scram-sha-256) over TLS only: a Secrets Manager rotation in the middle of a steady load loses no
 * request; verify-full, require and disable behave as their names say; IAM tokens minted by
 * @aws-sdk/rds-signer are what reaches the server, cached, refreshed ahead of expiry and minted again
 * after a refusal. Secrets Manager is the local stand-in (test/support/secrets-manager-standin.ts). The
 * credentials suite (database-credentials-suite.ts) runs here first, on the same server.
 */
import { Signer } from "@aws-sdk/rds-signer";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { GatewayConfigInput } from "../../../gateway/config/schema.js";
import { GatewayError } from "../../../gateway/errors.js";
import type { Pool } from "../../../gateway/pool/pool.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { type PasswordServer, startPasswordServer } from "../../support/pg-password-server.js";
import { waitFor } from "../../support/wait-for.js";
import { type SecretsManagerStandIn, startSecretsManagerStandIn } from "../../support/secrets-manager-standin.js";
import { defineCredentialsSuite } from "./database-credentials-suite.js";

const AWS_KEYS = { accessKeyId: "AKIAPOOLGATETEST0001", secretAccessKey: "poolgate-test-secret-access-key-0000000" };

let server: PasswordServer;
let standin: SecretsManagerStandIn;

beforeAll(async () => {
  // The SDK signs every call: dummy credentials from the environment (the stand-in checks no signature).
  vi.stubEnv("AWS_ACCESS_KEY_ID", AWS_KEYS.accessKeyId);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", AWS_KEYS.secretAccessKey);
  vi.stubEnv("AWS_REGION", "us-east-1");
  vi.stubEnv("AWS_EC2_METADATA_DISABLED", "true");
  server = await startPasswordServer({ idempotencyTableForAll: true });
  standin = await startSecretsManagerStandIn();
});

afterAll(async () => {
  await standin?.close();
  await server?.stop();
  vi.unstubAllEnvs();
});

defineCredentialsSuite({
  name: "a PostgreSQL server that asks for passwords over TLS",
  engine: "postgres",
  async start(user, password) {
    await server.createRole(user, password);
    return {
      // The URL's user and password are wrong on purpose: the secret's must win.
      url: server.url("not-this-user", "not-this-password"),
      cluster: { tls: { mode: "verify-full", caFile: server.certificates.caFile } },
      setPassword: (next) => server.setPassword(user, next),
      running: async (marker) =>
        Number((await server.admin<{ n: string }>("select count(*) as n from pg_stat_activity where state = 'active' and query like $1 and pid <> pg_backend_pid()", [`%${marker}%`]))[0]?.n),
      close: async () => void (await server.admin(`drop role if exists ${user}`)),
    };
  },
  whoAmI: { sql: "select current_user as who", expected: (user) => user },
  sleep: (seconds, marker) => `select pg_sleep(${seconds}) /* ${marker} */`,
});

function writerPool(gw: TestGateway): Pool {
  const cluster = gw.gateway.clusters.get("default");
  if (!cluster) throw new Error("no default cluster");
  return cluster.poolOf(cluster.writer);
}

const whoAmI = "select current_user as who, (select ssl from pg_stat_ssl where pid = pg_backend_pid()) as tls";

describe("Secrets Manager rotation", () => {
  const ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:rotating-app-AbCdEf";
  const secret = (password: string) => JSON.stringify({ engine: "postgres", host: "127.0.0.1", username: "rotating_app", password });

  it("serves a steady concurrent load through an RDS single-user rotation without losing a request", async () => {
    await server.createRole("rotating_app", "first-password-1");
    standin.setStage(ARN, "AWSCURRENT", secret("first-password-1"));
    const gw = await startTestGateway({
      // No user or password in the URL: the login comes from the secret.
      clusters: {
        default: {
          writerUrl: `postgres://127.0.0.1:${server.port}/postgres`,
          credentials: { source: "secrets-manager", secretArn: ARN },
          tls: { mode: "verify-full", caFile: server.certificates.caFile },
        },
      },
      aws: { secretsManagerEndpoint: standin.url },
      // Sessions live about a second, so the pool keeps opening new ones through the rotation.
      pool: { maxSize: 4, minIdle: 4, maxLifetimeMs: 1000, keepaliveMs: 500, housekeepingIntervalMs: 20, acquireTimeoutMs: 10000 },
    });
    try {
      expect(standin.calls("AWSCURRENT")).toBe(1);
      let succeeded = 0;
      const failures: string[] = [];
      let running = true;
      const worker = async () => {
        while (running) {
          const answer = await gw.post("/v1/query", { sql: "select current_user as who" });
          if (answer.status === 200 && answer.body.rows[0].who === "rotating_app") succeeded++;
          else failures.push(`${answer.status} ${JSON.stringify(answer.body)}`);
        }
      };
      const workers = Array.from({ length: 6 }, () => worker());
      await waitFor(() => succeeded >= 100, 10000, "load under way");

      // The rotation function's steps: createSecret (AWSPENDING), setSecret (the database), finishSecret.
      standin.setStage(ARN, "AWSPENDING", secret("second-password-2"));
      await server.setPassword("rotating_app", "second-password-2");
      const [changed] = await server.admin<{ at: Date }>("select now() as at");
      const sessionsSince = async (at: Date | undefined) =>
        Number((await server.admin<{ n: string }>("select count(*) as n from pg_stat_activity where usename = 'rotating_app' and backend_start > $1", [at]))[0]?.n);
      await waitFor(async () => (await sessionsSince(changed?.at)) >= 4, 10000, "sessions opened with the new password");
      const atFinish = succeeded;
      standin.setStage(ARN, "AWSCURRENT", secret("second-password-2"));
      standin.setStage(ARN, "AWSPENDING", undefined);
      const [finished] = await server.admin<{ at: Date }>("select now() as at");
      await waitFor(async () => (await sessionsSince(finished?.at)) >= 4 && succeeded >= atFinish + 100, 10000, "sessions renewed after the rotation");
      running = false;
      await Promise.all(workers);

      expect(failures).toEqual([]);
      expect(succeeded).toBeGreaterThan(200);
      expect(server.refusedLogins("rotating_app")).toBeGreaterThan(0);
      // A burst of refused connects caused one re-read: AWSCURRENT (still the old password), then AWSPENDING.
      expect(standin.calls("AWSCURRENT")).toBe(2);
      expect(standin.calls("AWSPENDING")).toBe(1);
      expect(writerPool(gw).stats().created).toBeGreaterThan(8);
    } finally {
      await gw.stop();
    }
  });
});

describe("TLS to the database", () => {
  beforeAll(async () => {
    await server.createRole("tls_app", "tls-password");
  });

  async function withGateway<T>(url: string, tls: NonNullable<GatewayConfigInput["clusters"]>[string]["tls"], act: (gw: TestGateway) => Promise<T>): Promise<T> {
    const gw = await startTestGateway({
      clusters: { default: { writerUrl: url, tls } },
      pool: { maxSize: 1, acquireTimeoutMs: 1000 },
      topology: { failoverWaitMs: 500 },
    });
    try {
      return await act(gw);
    } finally {
      await gw.stop();
    }
  }

  /**
   * A request is refused with 503; the router names it PRIMARY_UNAVAILABLE when the monitor never
   * reached the writer either (it cannot tell a database never reached from a failover), so the
   * pool's own answer is checked too: DATABASE_UNAVAILABLE, with the driver's reason kept for operators.
   */
  async function refusal(gw: TestGateway): Promise<{ code: string; lastError: string | undefined }> {
    const answer = await gw.post("/v1/query", { sql: "select 1" });
    expect(answer.status).toBe(503);
    expect(["DATABASE_UNAVAILABLE", "PRIMARY_UNAVAILABLE"]).toContain(answer.body.error.code);
    const error = await writerPool(gw).acquire().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(GatewayError);
    return { code: (error as GatewayError).code, lastError: writerPool(gw).databaseState().lastError };
  }

  it("verify-full with the CA that signed the server's certificate connects, and the session is encrypted", async () => {
    await withGateway(server.url("tls_app", "tls-password"), { mode: "verify-full", caFile: server.certificates.caFile }, async (gw) => {
      const answer = await gw.post("/v1/query", { sql: whoAmI });
      expect(answer.status).toBe(200);
      expect(answer.body.rows[0]).toEqual({ who: "tls_app", tls: true });
    });
  });

  it("verify-full with another CA refuses the server: DATABASE_UNAVAILABLE", async () => {
    await withGateway(server.url("tls_app", "tls-password"), { mode: "verify-full", caFile: server.certificates.otherCaFile }, async (gw) => {
      const { code, lastError } = await refusal(gw);
      expect(code).toBe("DATABASE_UNAVAILABLE");
      expect(lastError).toMatch(/certificate/i);
    });
  });

  it("verify-full refuses a server reached by an address its certificate does not name", async () => {
    const url = server.url("tls_app", "tls-password", "127.0.0.2");
    await withGateway(url, { mode: "verify-full", caFile: server.certificates.caFile }, async (gw) => {
      const { code, lastError } = await refusal(gw);
      expect(code).toBe("DATABASE_UNAVAILABLE");
      expect(lastError).toMatch(/does not match certificate's altnames/);
    });
  });

  it("mode disable is refused by a server that accepts TLS sessions only", async () => {
    await withGateway(server.url("tls_app", "tls-password"), { mode: "disable" }, async (gw) => {
      const { code, lastError } = await refusal(gw);
      expect(code).toBe("DATABASE_UNAVAILABLE");
      expect(lastError).toMatch(/no pg_hba\.conf entry.*no encryption/);
    });
  });

  it("require encrypts without checking the certificate, so an untrusted CA is accepted", async () => {
    await withGateway(server.url("tls_app", "tls-password", "127.0.0.2"), { mode: "require" }, async (gw) => {
      const answer = await gw.post("/v1/query", { sql: whoAmI });
      expect(answer.status).toBe(200);
      expect(answer.body.rows[0]).toEqual({ who: "tls_app", tls: true });
    });
  });
});

describe("IAM authentication tokens", () => {
  // Date is frozen (and moved) so that @aws-sdk/rds-signer signs predictable tokens: the test mints the
  // same token the gateway will, makes it the role's password, and the server's acceptance proves the
  // gateway sent exactly that token, over TLS (pg_stat_ssl).
  const T0 = Date.UTC(2031, 0, 15, 12, 0, 0);
  const minutes = (n: number) => n * 60_000;
  let gw: TestGateway;

  const tokenNow = () =>
    new Signer({ hostname: "127.0.0.1", port: server.port, username: "iam_app", region: "us-east-1", credentials: AWS_KEYS }).getAuthToken();

  /** Retires the pool's sessions and waits until a new one served a query. */
  async function queryOnNewSession(): Promise<{ status: number; body: { rows?: unknown[]; error?: { code: string; message: string } } }> {
    const pool = writerPool(gw);
    const created = pool.stats().created;
    pool.retireWhere(() => true, "test: open a new session");
    const answer = await gw.post("/v1/query", { sql: whoAmI });
    if (answer.status === 200) expect(pool.stats().created).toBeGreaterThan(created);
    return answer;
  }

  beforeAll(async () => {
    vi.setSystemTime(T0);
    await server.createRole("iam_app", await tokenNow());
    gw = await startTestGateway({
      clusters: {
        default: {
          writerUrl: `postgres://127.0.0.1:${server.port}/postgres`,
          credentials: { source: "iam", username: "iam_app", region: "us-east-1" },
          tls: { mode: "verify-full", caFile: server.certificates.caFile },
        },
      },
      pool: { maxSize: 1, acquireTimeoutMs: 1500 },
    });
  });

  afterAll(async () => {
    await gw?.stop();
    vi.useRealTimers();
  });

  it("logs in with the token rds-signer mints for the endpoint, over TLS", async () => {
    const answer = await gw.post("/v1/query", { sql: whoAmI });
    expect(answer.status).toBe(200);
    expect(answer.body.rows[0]).toEqual({ who: "iam_app", tls: true });
  });

  it("mints a new token after the server refused the cached one, and the request still succeeds", async () => {
    vi.setSystemTime(T0 + minutes(4));
    await server.setPassword("iam_app", await tokenNow());
    const refusedBefore = server.refusedLogins("iam_app");
    const answer = await queryOnNewSession();
    expect(answer.status).toBe(200);
    expect(server.refusedLogins("iam_app")).toBe(refusedBefore + 1);
  });

  it("reuses a cached token while more than five minutes of its validity remain", async () => {
    vi.setSystemTime(T0 + minutes(4 + 9));
    const refusedBefore = server.refusedLogins("iam_app");
    expect((await queryOnNewSession()).status).toBe(200);
    expect(server.refusedLogins("iam_app")).toBe(refusedBefore);
  });

  it("mints a fresh token for new sessions once less than five minutes remain; a token the server does not know fails", async () => {
    const previous = await tokenNow();
    vi.setSystemTime(T0 + minutes(4 + 11));
    // The server still knows the previous token (valid four more minutes): only a newly minted one can fail here.
    const refused = await queryOnNewSession();
    expect(refused.status).toBe(503);
    expect(refused.body.error?.code).toBe("DATABASE_UNAVAILABLE");
    expect(JSON.stringify(refused.body)).not.toContain("X-Amz-Signature");
    expect(JSON.stringify(refused.body)).not.toContain(previous);

    await server.setPassword("iam_app", await tokenNow());
    const answer = await gw.post("/v1/query", { sql: whoAmI });
    expect(answer.status).toBe(200);
    expect(answer.body.rows[0]).toEqual({ who: "iam_app", tls: true });
  });
});
