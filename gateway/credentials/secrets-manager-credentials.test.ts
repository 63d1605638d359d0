import { describe, expect, it } from "vitest";
import type { SecretStage } from "../aws/secrets-manager.js";
import { silentLogger } from "../logger.js";
import { ManualClock } from "../clock.js";
import { databaseLogin } from "./database-credentials.js";
import { type SecretSource, SecretsManagerCredentials } from "./secrets-manager-credentials.js";

const ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:app-AbCdEf";
const rds = (username: string, password: string) => JSON.stringify({ engine: "postgres", username, password, host: "db.example" });

/** A secret whose stages a test sets, counting reads; `gate` holds reads until released. */
class StagedSecret implements SecretSource {
  stages: Partial<Record<SecretStage, string>> = {};
  reads: SecretStage[] = [];
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;

  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  release(): void {
    this.open?.();
    this.gate = undefined;
  }

  async read(_arn: string, stage: SecretStage = "AWSCURRENT"): Promise<string | undefined> {
    this.reads.push(stage);
    await this.gate;
    return this.stages[stage];
  }
}

function setUp(stages: Partial<Record<SecretStage, string>>) {
  const secret = new StagedSecret();
  secret.stages = stages;
  const clock = new ManualClock(0);
  const credentials = new SecretsManagerCredentials(ARN, secret, silentLogger, { clock, minRereadIntervalMs: 1000 });
  return { secret, clock, credentials };
}

describe("SecretsManagerCredentials", () => {
  it("reads AWSCURRENT once and serves the login from memory afterwards", async () => {
    const { secret, credentials } = setUp({ AWSCURRENT: rds("app", "one") });
    await credentials.prepare();
    const login = await credentials.current();
    expect(login).toMatchObject({ user: "app", password: "one" });
    await credentials.current();
    expect(secret.reads).toEqual(["AWSCURRENT"]);
  });

  it("keeps the password out of JSON and enumeration", async () => {
    const { credentials } = setUp({ AWSCURRENT: rds("app", "hunter2") });
    const login = await credentials.current();
    expect(JSON.stringify(login)).not.toContain("hunter2");
    expect(Object.keys(login)).toEqual(["user"]);
  });

  it("after a refusal, takes a new AWSCURRENT without reading AWSPENDING", async () => {
    const { secret, clock, credentials } = setUp({ AWSCURRENT: rds("app", "one") });
    const failed = await credentials.current();
    secret.stages.AWSCURRENT = rds("app", "two");
    clock.advance(5000);
    expect(await credentials.afterAuthenticationFailure(failed)).toBe(true);
    expect(await credentials.current()).toMatchObject({ password: "two" });
    expect(secret.reads).toEqual(["AWSCURRENT", "AWSCURRENT"]);
  });

  it("falls back to AWSPENDING while AWSCURRENT still holds the refused password (rotation mid-way)", async () => {
    const { secret, clock, credentials } = setUp({ AWSCURRENT: rds("app", "one") });
    const failed = await credentials.current();
    secret.stages.AWSPENDING = rds("app", "two");
    clock.advance(5000);
    expect(await credentials.afterAuthenticationFailure(failed)).toBe(true);
    expect(await credentials.current()).toMatchObject({ password: "two" });
    expect(secret.reads).toEqual(["AWSCURRENT", "AWSCURRENT", "AWSPENDING"]);
    // The rotation finishes: nothing more is read while the held login works.
    secret.stages = { AWSCURRENT: rds("app", "two") };
    expect(await credentials.current()).toMatchObject({ password: "two" });
    expect(secret.reads).toHaveLength(3);
  });

  it("says nothing changed when neither stage has anything newer", async () => {
    const { clock, credentials } = setUp({ AWSCURRENT: rds("app", "one"), AWSPENDING: rds("app", "one") });
    const failed = await credentials.current();
    clock.advance(5000);
    expect(await credentials.afterAuthenticationFailure(failed)).toBe(false);
  });

  it("shares one read among a burst of refused connects", async () => {
    const { secret, clock, credentials } = setUp({ AWSCURRENT: rds("app", "one") });
    const failed = await credentials.current();
    secret.stages.AWSPENDING = rds("app", "two");
    clock.advance(5000);
    secret.hold();
    const burst = Array.from({ length: 20 }, () => credentials.afterAuthenticationFailure(failed));
    secret.release();
    expect(await Promise.all(burst)).toEqual(Array.from({ length: 20 }, () => true));
    expect(secret.reads).toEqual(["AWSCURRENT", "AWSCURRENT", "AWSPENDING"]);
  });

  it("answers a refusal of an older login at once, without reading: the held one is newer", async () => {
    const { secret, clock, credentials } = setUp({ AWSCURRENT: rds("app", "one") });
    const old = await credentials.current();
    secret.stages.AWSCURRENT = rds("app", "two");
    clock.advance(5000);
    await credentials.afterAuthenticationFailure(old);
    const reads = secret.reads.length;
    expect(await credentials.afterAuthenticationFailure(databaseLogin("app", "one"))).toBe(true);
    expect(secret.reads).toHaveLength(reads);
  });

  it("does not read again within minRereadIntervalMs of the last read when the same login is refused", async () => {
    const { secret, clock, credentials } = setUp({ AWSCURRENT: rds("app", "one") });
    const failed = await credentials.current();
    clock.advance(999);
    expect(await credentials.afterAuthenticationFailure(failed)).toBe(false);
    expect(secret.reads).toHaveLength(1);
    clock.advance(1);
    expect(await credentials.afterAuthenticationFailure(failed)).toBe(false);
    expect(secret.reads).toEqual(["AWSCURRENT", "AWSCURRENT", "AWSPENDING"]);
  });

  it("refuses a secret that is not the RDS JSON format, without quoting it", async () => {
    for (const text of ["hunter2-not-json", JSON.stringify({ user: "app", pass: "hunter2" })]) {
      const { credentials } = setUp({ AWSCURRENT: text });
      const error = await credentials.current().catch((err: unknown) => err as Error);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toContain(ARN);
      expect((error as Error).message).toContain('{"username", "password"}');
      expect((error as Error).message).not.toContain("hunter2");
    }
  });

  it("fails when the secret has no AWSCURRENT value", async () => {
    const { credentials } = setUp({});
    await expect(credentials.prepare()).rejects.toThrow(`secret ${ARN} has no AWSCURRENT value`);
  });
});
