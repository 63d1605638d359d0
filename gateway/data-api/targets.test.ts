import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../config/load.js";
import { credentialVariants } from "./targets.js";

const RESOURCE = "arn:aws:rds:us-east-1:123456789012:cluster:app";
const SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:reporting";
const CLUSTER_SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:app";

const configWith = (secret: { username?: string; password?: string }, credentials?: unknown) =>
  parseConfig({
    clusters: { default: { writerUrl: "postgres://url-user:url-pw@db.example:5432/app", ...(credentials === undefined ? {} : { credentials }) } },
    dataApi: { resources: { [RESOURCE]: { cluster: "default", secrets: { [SECRET]: secret } } } },
  });

describe("credentialVariants", () => {
  it("gives a secret with its own username and password pools that log in with them", () => {
    const [variant] = credentialVariants(configWith({ username: "reporting", password: "r-pw" }, { source: "secrets-manager", secretArn: CLUSTER_SECRET }));
    expect(variant?.endpoints.writerUrl).toBe("postgres://reporting:r-pw@db.example:5432/app");
  });

  it("completes a half login from the cluster URL when the URL is where the cluster's login comes from", () => {
    const [variant] = credentialVariants(configWith({ username: "reporting" }));
    expect(variant?.endpoints.writerUrl).toBe("postgres://reporting:url-pw@db.example:5432/app");
  });

  it("refuses a half login when the cluster's login comes from a credentials source", () => {
    const config = configWith({ username: "reporting" }, { source: "secrets-manager", secretArn: CLUSTER_SECRET });
    expect(() => credentialVariants(config)).toThrow(ConfigError);
    expect(() => credentialVariants(config)).toThrow("takes its credentials from secrets-manager; give both username and password, or neither");
  });
});
