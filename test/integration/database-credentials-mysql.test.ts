/**
 * MySQL sessions with credentials from Secrets Manager, on the real local MariaDB: a user with a
 * password made for this file (dropped after), the login taken from the secret (not the URL) for
 * pooled sessions and for the KILL QUERY side session, and a password changed mid-run followed
 * through AWSPENDING. MariaDB here has no TLS (have_ssl DISABLED), so TLS and IAM's cleartext plugin
 * are covered by gateway/engines/mysql/engine.test.ts instead.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Pool } from "../../gateway/pool/pool.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { createTestMysqlDatabase, type TestMysqlDatabase } from "../support/mysql.js";
import { type SecretsManagerStandIn, startSecretsManagerStandIn } from "../support/secrets-manager-standin.js";

const ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:mysql-app-AbCdEf";
const user = `poolgate_cred_${randomBytes(4).toString("hex")}`;
const secret = (password: string) => JSON.stringify({ engine: "mysql", username: user, password });

let db: TestMysqlDatabase;
let standin: SecretsManagerStandIn;
let gw: TestGateway;

function writerPool(): Pool {
  const cluster = gw.gateway.clusters.get("default");
  if (!cluster) throw new Error("no default cluster");
  return cluster.poolOf(cluster.writer);
}

beforeAll(async () => {
  vi.stubEnv("AWS_ACCESS_KEY_ID", "AKIAPOOLGATETEST0002");
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", "poolgate-test-secret-access-key-0000000");
  vi.stubEnv("AWS_REGION", "us-east-1");
  vi.stubEnv("AWS_EC2_METADATA_DISABLED", "true");
  db = await createTestMysqlDatabase();
  await db.admin.query(`CREATE USER '${user}'@'%' IDENTIFIED BY 'first-password-1'`);
  await db.admin.query(`GRANT ALL ON \`${db.name}\`.* TO '${user}'@'%'`);
  standin = await startSecretsManagerStandIn();
  standin.setStage(ARN, "AWSCURRENT", secret("first-password-1"));
  // The URL's user and password are wrong on purpose: the secret's must win.
  const url = new URL(db.url);
  url.username = "not-this-user";
  url.password = "not-this-password";
  gw = await startTestGateway({
    clusters: { default: { writerUrl: url.toString(), credentials: { source: "secrets-manager", secretArn: ARN } } },
    aws: { secretsManagerEndpoint: standin.url },
    pool: { maxSize: 2, acquireTimeoutMs: 5000 },
  });
});

afterAll(async () => {
  await gw?.stop();
  await standin?.close();
  await db?.admin.query(`DROP USER IF EXISTS '${user}'@'%'`);
  await db?.drop();
  vi.unstubAllEnvs();
});

describe("MySQL credentials from Secrets Manager", () => {
  it("opens sessions as the secret's user, not the URL's", async () => {
    const answer = await gw.post("/v1/query", { sql: "select current_user() as who" });
    expect(answer.status).toBe(200);
    expect(answer.body.rows[0].who).toBe(`${user}@%`);
    expect(standin.calls("AWSCURRENT")).toBe(1);
  });

  it("stops a timed-out statement with KILL QUERY from a side session that logs in with the secret too", async () => {
    const answer = await gw.post("/v1/query", { sql: "select sleep(30) /* kill-me */", timeoutMs: 300 });
    expect(answer.status).toBe(504);
    // KILL QUERY landed (the statement ended, the session stayed): nothing is still sleeping.
    const [rows] = await db.admin.query("select count(*) as n from information_schema.PROCESSLIST where INFO like '%kill-me%' and ID <> CONNECTION_ID()");
    expect(Number((rows as { n: number }[])[0]?.n)).toBe(0);
    expect(writerPool().stats().evicted).toBe(0);
  });

  it("follows a password change to AWSPENDING after the server refuses the current one (1045)", async () => {
    standin.setStage(ARN, "AWSPENDING", secret("second-password-2"));
    await db.admin.query(`ALTER USER '${user}'@'%' IDENTIFIED BY 'second-password-2'`);
    const pool = writerPool();
    const created = pool.stats().created;
    pool.retireWhere(() => true, "test: open new sessions");
    const answer = await gw.post("/v1/query", { sql: "select current_user() as who" });
    expect(answer.status).toBe(200);
    expect(pool.stats().created).toBeGreaterThan(created);
    expect(standin.calls("AWSCURRENT")).toBe(2);
    expect(standin.calls("AWSPENDING")).toBe(1);
  });
});
