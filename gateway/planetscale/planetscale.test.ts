import { cast } from "@planetscale/database";
import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.js";
import { planetscaleErrorAnswer } from "./errors.js";
import { planetscaleField, vitessType } from "./fields.js";
import { packedRow, planetscaleResultJson } from "./results.js";
import { planetscaleCredential, planetscaleUser } from "./user.js";

const basic = (text: string) => ({ authorization: `Basic ${Buffer.from(text).toString("base64")}` });

describe("Vitess's types from MySQL's column type and flags", () => {
  it.each([
    [1, 0, "INT8"],
    [1, 32, "UINT8"],
    [9, 32, "UINT24"],
    [8, 0, "INT64"],
    [8, 32 | 1, "UINT64"],
    [4, 0, "FLOAT32"],
    [246, 0, "DECIMAL"],
    [252, 0, "TEXT"],
    [252, 128, "BLOB"],
    [253, 0, "VARCHAR"],
    [253, 128, "VARBINARY"],
    [254, 128, "BINARY"],
    [254, 256, "ENUM"],
    [254, 2048, "SET"],
    [16, 32, "BIT"],
    [12, 128, "DATETIME"],
    [245, 144, "JSON"],
    [6, 0, "NULL"],
  ])("type %i with flags %i is %s", (mysqlType, flags, name) => {
    expect(vitessType(mysqlType, flags)).toBe(name);
  });

  it("leaves NULL's type out, as protojson does, and reports MariaDB's JSON as JSON", () => {
    expect(planetscaleField({ name: "n", type: "null" }, undefined)).toEqual({ name: "n" });
    const detail = { table: "t", originalName: "j", nullable: true, autoIncrement: false, signed: false, precision: 4294967295, scale: 0, typeId: 252, flags: 16, characterSet: 224, originalTable: "t", schema: "db" };
    expect(planetscaleField({ name: "j", type: "json" }, detail)).toEqual({ name: "j", type: "JSON", table: "t", orgTable: "t", database: "db", orgName: "j", columnLength: 4294967295, charset: 224, flags: 16 });
  });
});

describe("rows as lengths and base64 values", () => {
  it("packs text as UTF-8, bytes as they are and NULL as -1, which the driver's decoding and cast read back", () => {
    const packed = packedRow(["ü😀", Buffer.from([0, 255]), null, "42"]);
    expect(packed.lengths).toEqual(["6", "2", "-1", "2"]);
    const binary = atob(packed.values);
    expect(cast({ name: "s", type: "VARCHAR", charset: 255 }, binary.slice(0, 6))).toBe("ü😀");
    expect(cast({ name: "b", type: "BLOB", charset: 63 }, binary.slice(6, 8))).toEqual(new Uint8Array([0, 255]));
    expect(cast({ name: "i", type: "INT32", charset: 63 }, binary.slice(8))).toBe(42);
  });

  it("answers a write's counts as 64-bit strings", () => {
    expect(JSON.parse(planetscaleResultJson({ command: "INSERT", columns: [], rows: [], rowCount: 2, lastInsertId: "18446744073709551615" }))).toEqual({
      rowsAffected: "2",
      insertId: "18446744073709551615",
    });
  });
});

describe("failures in the driver's shape", () => {
  it("writes a database error's number and SQLSTATE into the message as Vitess does, with Vitess's code", () => {
    const error = new GatewayError("DATABASE_ERROR", "Duplicate entry '1' for key 'PRIMARY'", { database: { sqlstate: "23000", message: "Duplicate entry '1' for key 'PRIMARY'", engineCode: 1062 } });
    expect(planetscaleErrorAnswer(error)).toEqual({
      status: 200,
      error: { message: "Duplicate entry '1' for key 'PRIMARY' (errno 1062) (sqlstate 23000)", code: "ALREADY_EXISTS", poolgateCode: "DATABASE_ERROR" },
    });
    // Prisma's PlanetScale adapter reads the number and state back with this expression.
    expect(/^(.*) \(errno (\d+)\) \(sqlstate ([A-Z0-9]+)\)/.exec(planetscaleErrorAnswer(error).error.message)?.slice(1)).toEqual(["Duplicate entry '1' for key 'PRIMARY'", "1062", "23000"]);
  });

  it("answers the gateway's refusals with the session (200), bad credentials as 401 and its own failures with their status", () => {
    expect(planetscaleErrorAnswer(new GatewayError("FORBIDDEN", "this principal may only read"))).toMatchObject({ status: 200, error: { code: "PERMISSION_DENIED" } });
    expect(planetscaleErrorAnswer(new GatewayError("UNAUTHENTICATED", "unknown bearer token"))).toMatchObject({ status: 401, error: { code: "UNAUTHENTICATED" } });
    expect(planetscaleErrorAnswer(new GatewayError("POOL_TIMEOUT", "no session"))).toMatchObject({ status: 503, error: { code: "UNAVAILABLE", poolgateCode: "POOL_TIMEOUT" } });
    expect(planetscaleErrorAnswer(new GatewayError("THROTTLED", "too many"))).toMatchObject({ status: 429, error: { code: "RESOURCE_EXHAUSTED" } });
  });
});

describe("the Basic credential", () => {
  it("names the principal and the cluster, percent-decoded as a URL's userinfo sends them", () => {
    expect(planetscaleUser(basic("app%40main:token"))).toEqual({ principal: "app", cluster: "main" });
    expect(planetscaleUser(basic("svc@team@main:token"))).toEqual({ principal: "svc@team", cluster: "main" });
    expect(planetscaleCredential(basic("app@main:tok:en"))).toBe("Bearer tok:en");
    expect(planetscaleCredential(basic("app@main:"))).toBeUndefined();
    expect(planetscaleCredential({ authorization: "Bearer x" })).toBeUndefined();
  });

  it("is refused without a cluster, and the refusal never echoes the password", () => {
    for (const headers of [{}, basic("app:secret-password"), basic("@main:secret-password"), basic("app@:secret-password"), basic("%E0%A4%A@main:secret-password")]) {
      let refusal: unknown;
      try {
        planetscaleUser(headers);
      } catch (err) {
        refusal = err;
      }
      expect(refusal).toBeInstanceOf(GatewayError);
      expect((refusal as GatewayError).code).toBe("INVALID_REQUEST");
      expect((refusal as GatewayError).message).not.toContain("secret-password");
    }
  });
});
