import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../config/load.js";
import { dataApiSecretLogin } from "../credentials/logins.js";
import { dataApiSecretLogins } from "./targets.js";

const RESOURCE = "arn:aws:rds:us-east-1:123456789012:cluster:app";
const SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:reporting";
const CLUSTER_SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:app";

const configWith = (secret: { username?: string; password?: string }, credentials?: unknown) =>
  parseConfig({
    clusters: { default: { writerUrl: "postgres://url-user:url-pw@db.example:5432/app", ...(credentials === undefined ? {} : { credentials }) } },
    dataApi: { resources: { [RESOURCE]: { cluster: "default", secrets: { [SECRET]: secret } } } },
  });

const loginOf = async (config: ReturnType<typeof configWith>) => {
  const credentials = dataApiSecretLogins(config).get("default")?.get(dataApiSecretLogin(RESOURCE, SECRET));
  return credentials?.current({ host: "db.example", port: 5432 });
};

describe("dataApiSecretLogins", () => {
  it("gives a secret with its own username and password a login of the cluster", async () => {
    const login = await loginOf(configWith({ username: "reporting", password: "r-pw" }, { source: "secrets-manager", secretArn: CLUSTER_SECRET }));
    expect(login?.user).toBe("reporting");
    expect(login?.password).toBe("r-pw");
  });

  it("completes a half login from the cluster URL when the URL is where the cluster's login comes from", async () => {
    const login = await loginOf(configWith({ username: "reporting" }));
    expect(login?.user).toBe("reporting");
    expect(login?.password).toBe("url-pw");
  });

  it("refuses a half login when the cluster's login comes from a credentials source", () => {
    const config = configWith({ username: "reporting" }, { source: "secrets-manager", secretArn: CLUSTER_SECRET });
    expect(() => dataApiSecretLogins(config)).toThrow(ConfigError);
    expect(() => dataApiSecretLogins(config)).toThrow("takes its credentials from secrets-manager; give both username and password, or neither");
  });

  it("gives secrets without a user of their own no login", () => {
    expect(dataApiSecretLogins(configWith({})).size).toBe(0);
  });
});
