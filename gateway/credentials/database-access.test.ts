import { describe, expect, it } from "vitest";
import { ConfigError } from "../config/load.js";
import type { ClusterConfig } from "../config/schema.js";
import { silentLogger } from "../logger.js";
import { databaseAccessFor } from "./database-access.js";
import { IamTokenCredentials } from "./iam-token-credentials.js";
import { READ_ONLY_LOGIN } from "./logins.js";
import { SecretsManagerCredentials } from "./secrets-manager-credentials.js";

const secrets = { read: () => Promise.resolve(undefined) };
const cluster = (extra: Partial<ClusterConfig>): ClusterConfig => ({ writerUrl: "postgres://u:p@db.example:5432/app", readerUrls: [], ...extra });

describe("databaseAccessFor", () => {
  it("leaves credentials and TLS to the URLs when neither is configured", () => {
    expect(databaseAccessFor("a", cluster({}), { secrets, logger: silentLogger })).toEqual({ credentials: undefined, tls: undefined });
  });

  it("builds a Secrets Manager source for source secrets-manager", () => {
    const access = databaseAccessFor("a", cluster({ credentials: { source: "secrets-manager", secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:x" } }), {
      secrets,
      logger: silentLogger,
    });
    expect(access.credentials).toBeInstanceOf(SecretsManagerCredentials);
  });

  it("signs IAM tokens in the region of the writer's RDS host name, or the configured one", async () => {
    const regions: string[] = [];
    const mintToken = (region: string) => {
      regions.push(region);
      return async () => "token";
    };
    const rdsHost = "postgres://db.cluster-abc.eu-central-1.rds.amazonaws.com:5432/app";
    const inferred = databaseAccessFor("a", cluster({ writerUrl: rdsHost, credentials: { source: "iam", username: "app" }, tls: { mode: "require" } }), {
      secrets,
      logger: silentLogger,
      mintToken,
    });
    expect(inferred.credentials).toBeInstanceOf(IamTokenCredentials);
    databaseAccessFor("b", cluster({ credentials: { source: "iam", username: "app", region: "us-west-2" }, tls: { mode: "require" } }), {
      secrets,
      logger: silentLogger,
      mintToken,
    });
    expect(regions).toEqual(["eu-central-1", "us-west-2"]);
    await expect(inferred.credentials?.current({ host: "x", port: 1 })).resolves.toMatchObject({ user: "app", password: "token" });
  });

  it("stops the start when the IAM region can be neither read from the host nor found in the setting", () => {
    const build = () => databaseAccessFor("a", cluster({ credentials: { source: "iam", username: "app" }, tls: { mode: "require" } }), { secrets, logger: silentLogger });
    expect(build).toThrow(ConfigError);
    expect(build).toThrow('clusters.a.credentials.region: is needed: the writer host "db.example" is not *.<region>.rds.amazonaws.com');
  });

  it("makes an Aurora DSQL cluster: tokens for every login in the endpoint's region, TLS verify-full by default", async () => {
    const regions: string[] = [];
    const mintDsqlToken = (region: string) => {
      regions.push(region);
      return async (_target: unknown, user: string) => `dsql-token-for-${user}`;
    };
    const endpoint = "postgres://abcdefghijklmnopqrstuvwxyz.dsql.ap-southeast-2.on.aws:5432/postgres";
    const access = databaseAccessFor(
      "d",
      cluster({
        writerUrl: endpoint,
        credentials: { source: "dsql", username: "admin" },
        logins: { readOnly: { source: "dsql", username: "poolgate_ro" }, principals: {} },
      }),
      { secrets, logger: silentLogger, mintDsqlToken },
    );
    expect(access.flavour).toBe("aurora-dsql");
    expect(access.tls).toEqual({ mode: "verify-full", ca: undefined });
    expect(access.credentials).toBeInstanceOf(IamTokenCredentials);
    expect(access.credentials?.kind).toBe("iam-token");
    await expect(access.credentials?.current({ host: "x", port: 1 })).resolves.toMatchObject({ user: "admin", password: "dsql-token-for-admin" });
    await expect(access.logins?.get(READ_ONLY_LOGIN)?.current({ host: "x", port: 1 })).resolves.toMatchObject({
      user: "poolgate_ro",
      password: "dsql-token-for-poolgate_ro",
    });
    expect(regions).toEqual(["ap-southeast-2", "ap-southeast-2"]);
    // An explicit TLS setting is kept; a cluster that is not a DSQL one has no flavour.
    expect(databaseAccessFor("d", cluster({ writerUrl: endpoint, credentials: { source: "dsql", username: "admin" }, tls: { mode: "require" } }), { secrets, logger: silentLogger, mintDsqlToken }).tls).toEqual({
      mode: "require",
    });
    expect(databaseAccessFor("a", cluster({}), { secrets, logger: silentLogger }).flavour).toBeUndefined();
  });

  it("stops the start when the DSQL region can be neither read from the endpoint nor found in the setting", () => {
    const build = () => databaseAccessFor("a", cluster({ credentials: { source: "dsql", username: "admin" } }), { secrets, logger: silentLogger });
    expect(build).toThrow('clusters.a.credentials.region: is needed: the writer host "db.example" is not <cluster id>.dsql.<region>.on.aws');
  });

  it("refuses a tls setting while a URL also chooses TLS (sslmode), instead of ignoring one of them", () => {
    const build = () =>
      databaseAccessFor("a", cluster({ readerUrls: ["postgres://u:p@r.example/app?sslmode=require"], tls: { mode: "verify-full" } }), { secrets, logger: silentLogger });
    expect(build).toThrow("clusters.a.tls: is set, and a URL also chooses TLS (sslmode)");
  });
});
