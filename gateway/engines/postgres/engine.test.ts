import { rootCertificates } from "node:tls";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { databaseLogin } from "../../credentials/database-credentials.js";
import { pgSslOptions, withLogin } from "./engine.js";

/** What pg makes of a connection string (no connection is opened). */
function parsedBy(url: string): { user: string | undefined; password: unknown; host: string; database: string | undefined } {
  const client = new pg.Client({ connectionString: url });
  return { user: client.user, password: client.password, host: client.host, database: client.database };
}

describe("PostgreSQL login from a credentials source", () => {
  it("leaves the URL alone without a login", () => {
    expect(withLogin("postgres://u:p@db:5432/app?application_name=x", undefined)).toBe("postgres://u:p@db:5432/app?application_name=x");
  });

  it("puts the login in place of the URL's, and pg reads back exactly the token", () => {
    const token = "db.example:5432/?Action=connect&DBUser=app%40x&X-Amz-Credential=AKIA%2F20300101%2Fus-east-1&X-Amz-Signature=ab+c/=";
    const url = withLogin("postgres://url-user:url-password@db.example:5432/app", databaseLogin("app@x", token));
    expect(parsedBy(url)).toEqual({ user: "app@x", password: token, host: "db.example", database: "app" });
    // A URL without user or password gets both.
    expect(parsedBy(withLogin("postgres://db.example/app", databaseLogin("app", "pw")))).toMatchObject({ user: "app", password: "pw" });
  });
});

describe("PostgreSQL TLS options", () => {
  it("maps each mode onto pg's ssl option", () => {
    expect(pgSslOptions({ mode: "disable" })).toBe(false);
    expect(pgSslOptions({ mode: "require" })).toEqual({ rejectUnauthorized: false });
    expect(pgSslOptions({ mode: "verify-full", ca: undefined })).toEqual({ rejectUnauthorized: true });
  });

  it("builds the trust from the CA bundle once, as a secure context shared by every session", () => {
    const ssl = pgSslOptions({ mode: "verify-full", ca: rootCertificates[0] });
    expect(ssl).toMatchObject({ rejectUnauthorized: true, secureContext: expect.any(Object) });
    expect(ssl).not.toHaveProperty("ca");
  });
});
