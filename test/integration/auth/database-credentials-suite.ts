/**
 * Credentials from Secrets Manager, written once and run on each engine's real server: a login made
 * for the run, taken from the secret (not the URL) for pooled sessions and for whatever stops a
 * timed-out statement (PostgreSQL's CancelRequest, MySQL's KILL QUERY side session), and a password
 * changed mid-run followed through AWSPENDING after the server refused the current one. Secrets
 * Manager is the local stand-in (test/support/secrets-manager-standin.ts); the file that runs the
 * suite puts dummy AWS credentials in the environment (the SDK signs every call) for its whole run.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayConfigInput } from "../../../gateway/config/schema.js";
import type { Pool } from "../../../gateway/pool/pool.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { type SecretsManagerStandIn, startSecretsManagerStandIn } from "../../support/secrets-manager-standin.js";

type ClusterConfig = NonNullable<GatewayConfigInput["clusters"]>[string];

/** A server with a login of this run's own. */
export interface CredentialsServer {
  /** The writer URL, with a user and password that are not the login's. */
  url: string;
  /** More cluster settings the server needs (TLS). */
  cluster?: Partial<ClusterConfig>;
  setPassword(password: string): Promise<void>;
  /** Statements still running whose text contains `marker`. */
  running(marker: string): Promise<number>;
  close(): Promise<void>;
}

export interface CredentialsTarget {
  name: string;
  /** The secret's `engine` field. */
  engine: "postgres" | "mysql";
  /** Creates `user` with `password` on the server. */
  start(user: string, password: string): Promise<CredentialsServer>;
  /** Answers the session's user as `who`, and what it should read for `user`. */
  whoAmI: { sql: string; expected(user: string): string };
  sleep(seconds: number, marker: string): string;
}

export function defineCredentialsSuite(target: CredentialsTarget): void {
  describe(`credentials from Secrets Manager on ${target.name}`, () => {
    const ARN = `arn:aws:secretsmanager:us-east-1:123456789012:secret:${target.engine}-app-AbCdEf`;
    const user = `poolgate_cred_${randomBytes(4).toString("hex")}`;
    const secret = (password: string) => JSON.stringify({ engine: target.engine, username: user, password });
    let server: CredentialsServer;
    let standin: SecretsManagerStandIn;
    let gw: TestGateway;

    function writerPool(): Pool {
      const cluster = gw.gateway.clusters.get("default");
      if (!cluster) throw new Error("no default cluster");
      return cluster.poolOf(cluster.writer);
    }

    beforeAll(async () => {
      server = await target.start(user, "first-password-1");
      standin = await startSecretsManagerStandIn();
      standin.setStage(ARN, "AWSCURRENT", secret("first-password-1"));
      gw = await startTestGateway({
        clusters: { default: { writerUrl: server.url, credentials: { source: "secrets-manager", secretArn: ARN }, ...server.cluster } },
        aws: { secretsManagerEndpoint: standin.url },
        pool: { maxSize: 2, acquireTimeoutMs: 5000 },
      });
    });

    afterAll(async () => {
      await gw?.stop();
      await standin?.close();
      await server?.close();
    });

    it("opens sessions as the secret's user, not the URL's", async () => {
      const answer = await gw.post("/v1/query", { sql: target.whoAmI.sql });
      expect(answer.status).toBe(200);
      expect(answer.body.rows[0].who).toBe(target.whoAmI.expected(user));
      expect(standin.calls("AWSCURRENT")).toBe(1);
    });

    it("stops a timed-out statement on the server, the cancel reaching it with the secret's login too", async () => {
      const answer = await gw.post("/v1/query", { sql: target.sleep(30, "kill-me"), timeoutMs: 300 });
      expect(answer.status).toBe(504);
      // The cancel landed (the statement ended, the session stayed): nothing is still sleeping.
      expect(await server.running("kill-me")).toBe(0);
      expect(writerPool().stats().evicted).toBe(0);
    });

    it("follows a password change to AWSPENDING after the server refuses the current one", async () => {
      standin.setStage(ARN, "AWSPENDING", secret("second-password-2"));
      await server.setPassword("second-password-2");
      const pool = writerPool();
      const created = pool.stats().created;
      pool.retireWhere(() => true, "test: open new sessions");
      const answer = await gw.post("/v1/query", { sql: target.whoAmI.sql });
      expect(answer.status).toBe(200);
      expect(pool.stats().created).toBeGreaterThan(created);
      expect(standin.calls("AWSCURRENT")).toBe(2);
      expect(standin.calls("AWSPENDING")).toBe(1);
    });
  });
}
