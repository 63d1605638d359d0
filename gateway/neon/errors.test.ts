import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.js";
import { neonErrorAnswer } from "./errors.js";

describe("failures in Neon's shape", () => {
  it("keep a database error's fields as a 400, with the SQLSTATE as code and the position as text", () => {
    const error = new GatewayError("DATABASE_ERROR", "duplicate key value violates unique constraint \"t_pkey\"", {
      database: { sqlstate: "23505", message: "duplicate key value violates unique constraint \"t_pkey\"", detail: "Key (id)=(1) already exists.", constraint: "t_pkey", table: "t", schema: "public", position: 8 },
    });
    expect(neonErrorAnswer(error)).toEqual({
      status: 400,
      body: {
        message: "duplicate key value violates unique constraint \"t_pkey\"",
        code: "23505",
        poolgateCode: "DATABASE_ERROR",
        severity: "ERROR",
        detail: "Key (id)=(1) already exists.",
        constraint: "t_pkey",
        table: "t",
        schema: "public",
        position: "8",
      },
    });
  });

  it("answer the gateway's refusals as 400s named by their registry code", () => {
    expect(neonErrorAnswer(new GatewayError("FORBIDDEN", "this principal may only read"))).toEqual({
      status: 400,
      body: { message: "this principal may only read", code: "FORBIDDEN", poolgateCode: "FORBIDDEN" },
    });
    expect(neonErrorAnswer(new GatewayError("UNAUTHENTICATED", "unknown bearer token")).status).toBe(400);
  });

  it("keep the status of failures on the gateway's side, which the driver reports as server errors", () => {
    expect(neonErrorAnswer(new GatewayError("POOL_TIMEOUT", "no session")).status).toBe(503);
    expect(neonErrorAnswer(new GatewayError("THROTTLED", "too many")).status).toBe(429);
  });
});
