import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, parseConfig, redactUrl } from "./load.js";

describe("configuration", () => {
  it("has working defaults: embedded database, 127.0.0.1:8080, a fixed pool of 10", () => {
    const config = parseConfig({});
    expect(config.server).toMatchObject({ host: "127.0.0.1", port: 8080 });
    expect(config.clusters).toEqual({});
    expect(config.pool.maxSize).toBe(10);
    expect(config.pool.minIdle).toBeUndefined();
    expect(Object.isFrozen(config.pool)).toBe(true);
  });

  it("maps the environment over the file: PORT, HOST, POOLGATE_WRITER_URL, LOG_LEVEL", () => {
    const config = loadConfig({ PORT: "9000", HOST: "127.0.0.2", POOLGATE_WRITER_URL: "postgres://u:p@db:5432/app", LOG_LEVEL: "warn" });
    expect(config.server).toMatchObject({ host: "127.0.0.2", port: 9000 });
    expect(config.clusters.default?.writerUrl).toBe("postgres://u:p@db:5432/app");
    expect(config.log.level).toBe("warn");
  });

  it('refuses the principal "*" with IAM and no account list, unless the risk is accepted by name', () => {
    const iam = { audience: "poolgate", regions: ["eu-west-1"] };
    const wildcard = { "*": { clusters: { "*": "read-only" as const } } };
    expect(() => parseConfig({ auth: { iam, principals: wildcard } })).toThrow(/auth\.principals\.\*: .*any AWS account.*auth\.iam\.accounts.*acceptAnyAwsAccountForWildcard/s);
    expect(parseConfig({ auth: { iam: { ...iam, accounts: ["123456789012"] }, principals: wildcard } }).auth.iam?.accounts).toEqual(["123456789012"]);
    expect(parseConfig({ auth: { iam: { ...iam, acceptAnyAwsAccountForWildcard: true }, principals: wildcard } }).auth.principals["*"]).toBeDefined();
    // Without "*", every principal is an ARN that names its account.
    expect(parseConfig({ auth: { iam, principals: { "arn:aws:iam::123456789012:role/app": { clusters: { "*": "read-write" } } } } }).auth.iam?.accounts).toBeUndefined();
  });

  it("rejects unknown keys and says where they are", () => {
    expect(() => parseConfig({ pool: { maxSise: 5 } })).toThrow(/pool: Unrecognized key: "maxSise"/);
    expect(() => parseConfig({ surprise: 1 })).toThrow(ConfigError);
  });

  it("rejects impossible values instead of clamping them", () => {
    expect(() => parseConfig({ pool: { maxSize: 0 } })).toThrow(/pool\.maxSize/);
    expect(() => parseConfig({ pool: { maxSize: 2, minIdle: 5 } })).toThrow(/minIdle \(5\) exceeds maxSize \(2\)/);
    expect(() => parseConfig({ pool: { keepaliveMs: 60000, maxLifetimeMs: 30000 } })).toThrow(/keepaliveMs must be below maxLifetimeMs/);
    expect(() => parseConfig({ server: { port: 70000 } })).toThrow(/server\.port/);
    expect(() => parseConfig({ statements: { defaultTimeoutMs: 5000, maxTimeoutMs: 1000 } })).toThrow(/defaultTimeoutMs \(5000\) exceeds/);
    expect(() => parseConfig({ clusters: { main: { writerUrl: "oracle://db/app" } } })).toThrow(/postgres:\/\/.*or mysql:\/\//);
    expect(() => parseConfig({ defaultCluster: "main", clusters: { main: { writerUrl: "mysql://db/app", readerUrls: ["postgres://r/app"] } } })).toThrow(
      /readerUrls must use the same engine/,
    );
    expect(parseConfig({ defaultCluster: "main", clusters: { main: { writerUrl: "mysql://db/app" } } }).clusters.main?.writerUrl).toBe("mysql://db/app");
    expect(() => parseConfig({ clusters: { main: { writerUrl: "postgres://db/app" } } })).toThrow(
      /defaultCluster: "default" is not one of/,
    );
    expect(() => loadConfig({ PORT: "eighty" })).toThrow(/PORT must be a number/);
  });

  it("reports a missing or malformed config file clearly", () => {
    expect(() => loadConfig({ POOLGATE_CONFIG: "/nonexistent/poolgate.json" })).toThrow(
      /cannot read config file \/nonexistent\/poolgate.json/,
    );
  });

  it("fills database credentials from POOLGATE_DB_USER and POOLGATE_DB_PASSWORD (ECS secrets) into every URL", () => {
    const config = loadConfig({
      POOLGATE_WRITER_URL: "postgres://writer.example:5432/app",
      POOLGATE_READER_URLS: "postgres://reader.example:5432/app",
      POOLGATE_DB_USER: "poolgate_app",
      POOLGATE_DB_PASSWORD: "p@ss/word",
    });
    const cluster = config.clusters.default;
    expect(cluster?.writerUrl).toBe("postgres://poolgate_app:p%40ss%2Fword@writer.example:5432/app");
    expect(cluster?.readerUrls).toEqual(["postgres://poolgate_app:p%40ss%2Fword@reader.example:5432/app"]);
  });

  it("fills the result cache's Valkey password from POOLGATE_VALKEY_PASSWORD (an ECS secret) into its URL, and needs the URL", () => {
    const valkey = { url: "rediss://poolgate@cache.example:6379" };
    const config = loadConfig({ POOLGATE_CONFIG_JSON: JSON.stringify({ cache: { store: "valkey", valkey } }), POOLGATE_VALKEY_PASSWORD: "p@ss/word" });
    expect(config.cache.valkey?.url).toBe("rediss://poolgate:p%40ss%2Fword@cache.example:6379");
    expect(() => loadConfig({ POOLGATE_VALKEY_PASSWORD: "p@ss/word" })).toThrow(/POOLGATE_VALKEY_PASSWORD is set, but cache.valkey.url is not/);
  });

  it("takes the whole file's contents inline from POOLGATE_CONFIG_JSON", () => {
    const config = loadConfig({ POOLGATE_CONFIG_JSON: JSON.stringify({ pool: { maxSize: 7 }, clusters: { default: { writerUrl: "postgres://db/app" } } }) });
    expect(config.pool.maxSize).toBe(7);
    expect(() => loadConfig({ POOLGATE_CONFIG_JSON: "{" })).toThrow(/POOLGATE_CONFIG_JSON is not valid JSON/);
    expect(() => loadConfig({ POOLGATE_CONFIG_JSON: "{}", POOLGATE_CONFIG: "/x.json" })).toThrow(/not both/);
  });

  it("never shows a password when it prints a URL", () => {
    expect(redactUrl("postgres://app:hunter2@db:5432/x")).toBe("postgres://app:***@db:5432/x");
  });
});
