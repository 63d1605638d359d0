import type { Connection } from "mysql2";
import { describe, expect, it } from "vitest";
import { databaseLogin } from "../../credentials/database-credentials.js";
import { IamTokenCredentials } from "../../credentials/iam-token-credentials.js";
import { loginOptions, MysqlEngine, mysqlSslOptions } from "./engine.js";

const TOKEN = "app.cluster-abc.us-east-1.rds.amazonaws.com:3306/?Action=connect&DBUser=app&X-Amz-Signature=abc";

describe("MySQL session options from a credentials source", () => {
  it("keeps the URL's login when there is no source", () => {
    expect(loginOptions(undefined, undefined)).toEqual({});
  });

  it("sends a Secrets Manager password through the usual hashed plugins only: no cleartext plugin", () => {
    const options = loginOptions(databaseLogin("app", "secret-password"), "password");
    expect(options).toEqual({ user: "app", password: "secret-password" });
    expect(options.authPlugins).toBeUndefined();
  });

  it("answers Aurora's mysql_clear_password request with the IAM token, NUL-terminated", async () => {
    const options = loginOptions(databaseLogin("app", TOKEN), "iam-token");
    expect(options.user).toBe("app");
    const plugin = options.authPlugins?.mysql_clear_password;
    expect(plugin).toBeTypeOf("function");
    const answer = await plugin?.({ connection: {} as Connection, command: "auth_switch" })(Buffer.alloc(0));
    expect(answer).toEqual(Buffer.from(`${TOKEN}\0`));
  });
});

describe("MySQL TLS options", () => {
  it("maps each mode onto mysql2's ssl option", () => {
    expect(mysqlSslOptions(undefined)).toBeUndefined();
    expect(mysqlSslOptions({ mode: "disable" })).toBeUndefined();
    expect(mysqlSslOptions({ mode: "require" })).toEqual({ rejectUnauthorized: false, verifyIdentity: false });
    expect(mysqlSslOptions({ mode: "verify-full", ca: undefined })).toEqual({ rejectUnauthorized: true, verifyIdentity: true });
    expect(mysqlSslOptions({ mode: "verify-full", ca: "PEM" })).toEqual({ rejectUnauthorized: true, verifyIdentity: true, ca: "PEM" });
  });

  it("refuses IAM tokens without TLS: they travel in clear text", () => {
    const iam = new IamTokenCredentials("app", async () => TOKEN, { host: "h", port: 3306 });
    const settings = { preparedCacheSize: 10, cancelGraceMs: 100, credentials: iam };
    expect(() => new MysqlEngine(settings)).toThrow("the cluster needs tls mode require or verify-full");
    expect(() => new MysqlEngine({ ...settings, tls: { mode: "disable" } })).toThrow("require or verify-full");
    expect(() => new MysqlEngine({ ...settings, tls: { mode: "verify-full", ca: undefined } })).not.toThrow();
  });
});
