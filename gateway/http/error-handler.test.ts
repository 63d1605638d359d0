import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.js";
import { errorBody, toGatewayError } from "./error-handler.js";

describe("error mapping", () => {
  it("keeps gateway errors as they are, with the database fields and attempts", () => {
    const error = new GatewayError("DATABASE_ERROR", "duplicate key", {
      database: { sqlstate: "23505", message: "duplicate key", constraint: "k" },
      attempts: 1,
    });
    expect(errorBody(error, "req-1")).toEqual({
      error: {
        code: "DATABASE_ERROR",
        message: "duplicate key",
        retryable: false,
        requestId: "req-1",
        database: { sqlstate: "23505", message: "duplicate key", constraint: "k" },
        attempts: 1,
      },
    });
  });

  it("maps Fastify's body errors to registry codes", () => {
    expect(toGatewayError(Object.assign(new Error("too large"), { code: "FST_ERR_CTP_BODY_TOO_LARGE", statusCode: 413 })).code).toBe(
      "REQUEST_TOO_LARGE",
    );
    expect(toGatewayError(Object.assign(new Error("bad type"), { code: "FST_ERR_CTP_INVALID_MEDIA_TYPE", statusCode: 415 })).code).toBe(
      "UNSUPPORTED_MEDIA_TYPE",
    );
    expect(toGatewayError(Object.assign(new SyntaxError("Unexpected end"), { statusCode: 400 })).code).toBe("MALFORMED_JSON");
  });

  it("turns anything unexpected into INTERNAL_ERROR without its details", () => {
    const error = toGatewayError(new TypeError("secret internals"));
    expect(error.code).toBe("INTERNAL_ERROR");
    expect(error.status).toBe(500);
    expect(error.message).not.toContain("secret");
  });
});
