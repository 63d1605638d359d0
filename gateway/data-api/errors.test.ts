import { describe, expect, it } from "vitest";
import { ERROR_CODES, type ErrorCode } from "../../schemas/errors.js";
import { GatewayError } from "../errors.js";
import { DataApiRefusal, toDataApiError } from "./errors.js";

/** Registry codes after which nothing ran: the only ones the AWS SDK may retry (it retries 5xx). */
const NOTHING_RAN: ErrorCode[] = ["POOL_TIMEOUT", "AUTHENTICATION_UNAVAILABLE", "DATABASE_UNAVAILABLE", "PRIMARY_UNAVAILABLE", "GATEWAY_DRAINING", "TOO_MANY_TRANSACTIONS", "IDEMPOTENCY_UNAVAILABLE"];

describe("Data API exceptions", () => {
  it.each(Object.keys(ERROR_CODES) as ErrorCode[])("%s is a 5xx only when nothing ran", (code) => {
    const error = toDataApiError(new GatewayError(code, "x"));
    if (NOTHING_RAN.includes(code)) expect(error.status).toBeGreaterThanOrEqual(500);
    else expect(error.status).toBeLessThan(500);
  });

  it("names the exceptions the SDK knows", () => {
    expect(toDataApiError(new GatewayError("OUTCOME_UNKNOWN", "lost")).name).toBe("DatabaseErrorException");
    expect(toDataApiError(new GatewayError("STATEMENT_TIMEOUT", "slow")).name).toBe("StatementTimeoutException");
    expect(toDataApiError(new GatewayError("TRANSACTION_EXPIRED", "idle")).name).toBe("TransactionNotFoundException");
    expect(toDataApiError(new GatewayError("INVALID_REQUEST", "bad")).name).toBe("BadRequestException");
    // The service's own answer for a paused Serverless v2 instance that is resuming: a client fault, 400.
    expect(toDataApiError(new GatewayError("DATABASE_RESUMING", "resuming"))).toMatchObject({ name: "DatabaseResumingException", status: 400 });
    expect(toDataApiError(new DataApiRefusal("ForbiddenException", "no"))).toEqual({ name: "ForbiddenException", status: 403, message: "no" });
    expect(toDataApiError(new Error("bug"))).toMatchObject({ name: "InternalServerErrorException", status: 400 });
  });

  it("writes database errors in the service's forms", () => {
    const pg = new GatewayError("DATABASE_ERROR", "x", {
      database: { sqlstate: "42883", message: "operator does not exist: integer = text", hint: "No operator matches.", position: 36 },
    });
    expect(toDataApiError(pg).message).toBe("ERROR: operator does not exist: integer = text; Hint: No operator matches.; Position: 36; SQLState: 42883");
    const mysql = new GatewayError("DATABASE_ERROR", "x", { database: { sqlstate: "23000", message: "Duplicate entry 'a' for key 'name'", engineCode: 1062 } });
    expect(toDataApiError(mysql).message).toBe("Duplicate entry 'a' for key 'name'; Error code: 1062; SQLState: 23000");
  });
});
