import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.js";
import { neonConnectionString, neonCredential } from "./connection-string.js";

const headers = (value: string | undefined) => (value === undefined ? {} : { "neon-connection-string": value });

describe("the Neon-Connection-String header", () => {
  it("names the principal, its token and the cluster, decoded", () => {
    expect(neonConnectionString(headers("postgresql://app%40team:tok%2Fen-0123456789abcdef0123@ep-x.example/main?sslmode=require"))).toEqual({
      user: "app@team",
      password: "tok/en-0123456789abcdef0123",
      database: "main",
    });
    expect(neonConnectionString(headers("postgres://app@host/db")).password).toBeUndefined();
  });

  it("is the bearer credential of the request when it has a password", () => {
    expect(neonCredential(headers("postgresql://app:token-0123456789abcdef0123@h/main"))).toBe("Bearer token-0123456789abcdef0123");
    expect(neonCredential(headers("postgresql://app@h/main"))).toBeUndefined();
    expect(neonCredential(headers(undefined))).toBeUndefined();
    expect(neonCredential(headers("not a url"))).toBeUndefined();
  });

  it("is refused when missing, not a postgresql URL or without a database, and the refusal never echoes it", () => {
    for (const value of [undefined, "", "mysql://app:secret-password@h/main", "postgresql://app:secret-password@h", "postgresql://app:secret-password@h/", "::"]) {
      let refusal: unknown;
      try {
        neonConnectionString(headers(value));
      } catch (err) {
        refusal = err;
      }
      expect(refusal, String(value)).toBeInstanceOf(GatewayError);
      expect((refusal as GatewayError).code).toBe("INVALID_REQUEST");
      expect((refusal as GatewayError).message).not.toContain("secret-password");
    }
  });
});
