import { describe, expect, it } from "vitest";
import { ERROR_CODES, type ErrorCode } from "../../schemas/errors.js";
import { DATA_API_EXCEPTIONS } from "../../schemas/data-api.js";
import { toDataApiError } from "../data-api/errors.js";
import { GatewayError, type GatewayErrorExtras } from "../errors.js";
import { isIdempotencyUnavailable, transactionIsOver } from "../failure-meaning.js";
import {
  type Applied,
  type FailureContext,
  isDatabaseRefusal,
  isReadOnlyRefusal,
  keyedFailure,
  meaningOf,
  outcomeOf,
  outcomeUnknown,
  type Retry,
  retryOf,
  sessionLost,
  unitFailure,
  type Unit,
  waitedOutForSession,
} from "./failure.js";

const error = (code: ErrorCode, extras: GatewayErrorExtras = {}) => new GatewayError(code, "boom", extras);
const refusal = () => error("DATABASE_ERROR", { refusedAsReadOnly: true, refusedAsWrite: true });

describe("the meaning of each registry code", () => {
  // code, applied, retry (the gateway's own), kind
  const table: [ErrorCode, Applied, Retry, string][] = [
    ["SERIALIZATION_FAILURE", "no", "back off", "conflict"],
    ["CONNECTION_LOST", "no", "now", "lost"],
    ["PRIMARY_UNAVAILABLE", "no", "now", "unavailable"],
    ["OUTCOME_UNKNOWN", "maybe", "never", "lost"],
    ["STATEMENT_TIMEOUT", "no", "never", "timeout"],
    ["DATABASE_ERROR", "no", "never", "database"],
    ["POOL_TIMEOUT", "no", "never", "unavailable"],
    ["DATABASE_UNAVAILABLE", "no", "never", "unavailable"],
    ["RESULT_TOO_LARGE", "maybe", "never", "request"],
    ["FORBIDDEN", "no", "never", "access"],
    ["TRANSACTION_ABORTED", "no", "never", "transaction"],
    ["INTERNAL_ERROR", "maybe", "never", "bug"],
  ];
  it.each(table)("%s: applied %s, retry %s, a %s failure", (code, applied, retry, kind) => {
    expect(meaningOf(error(code))).toEqual({ code, applied, retry, kind });
  });

  it("gives every registry code a meaning", () => {
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) expect(meaningOf(error(code)).code).toBe(code);
  });

  it("reads anything but a GatewayError as a bug that may have applied", () => {
    expect(meaningOf(new TypeError("x"))).toEqual({ code: "INTERNAL_ERROR", applied: "maybe", retry: "never", kind: "bug" });
  });

  it("never retries a failure the gateway already waited out (final)", () => {
    expect(retryOf(error("PRIMARY_UNAVAILABLE", { final: true }), false)).toBe("never");
  });

  it("runs a keyed write's unknown outcome again at once, and no one else's", () => {
    expect(retryOf(error("OUTCOME_UNKNOWN"), true)).toBe("now");
    expect(retryOf(error("OUTCOME_UNKNOWN"), false)).toBe("never");
    expect(retryOf(error("STATEMENT_TIMEOUT"), true)).toBe("never");
  });

  it("sends a Data API 5xx (which the AWS SDK runs again) only for codes that applied nothing", () => {
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
      const { status } = toDataApiError(error(code));
      if (status >= 500) expect(meaningOf(error(code)).applied, code).toBe("no");
      expect(DATA_API_EXCEPTIONS[toDataApiError(error(code)).name]).toBe(status);
    }
  });
});

describe("the outcome of a failed attempt in its context", () => {
  const on = (onReplica: boolean, intent: "read" | "write", more: Partial<FailureContext> = {}): FailureContext => ({
    unit: "statement",
    intent,
    endpoint: "db-1",
    onReplica,
    ...more,
  });
  // what failed, where, → code answered, applied, retry, failover sign
  const table: [string, GatewayError, FailureContext, ErrorCode, Applied, Retry, boolean][] = [
    ["a write lost on the primary", error("OUTCOME_UNKNOWN"), on(false, "write"), "OUTCOME_UNKNOWN", "maybe", "never", true],
    ["a read lost on a replica", error("OUTCOME_UNKNOWN"), on(true, "read"), "CONNECTION_LOST", "no", "now", false],
    ["a read lost on the primary", error("OUTCOME_UNKNOWN"), on(false, "read"), "OUTCOME_UNKNOWN", "maybe", "never", true],
    ["a known read-only read lost on the primary", error("OUTCOME_UNKNOWN"), on(false, "read", { rerun: true }), "CONNECTION_LOST", "no", "now", true],
    ["a session lost before anything was sent, on the primary", error("CONNECTION_LOST"), on(false, "write"), "CONNECTION_LOST", "no", "now", true],
    ["no session to be had on the primary", error("DATABASE_UNAVAILABLE"), on(false, "write"), "DATABASE_UNAVAILABLE", "no", "never", true],
    ["no session to be had on a replica", error("DATABASE_UNAVAILABLE"), on(true, "read"), "CONNECTION_LOST", "no", "now", false],
    ["a write refused by a confirmed demoted primary", refusal(), on(false, "write", { instanceReadOnly: true }), "PRIMARY_UNAVAILABLE", "no", "now", true],
    ["a write refused by the session's own READ ONLY", refusal(), on(false, "write"), "DATABASE_ERROR", "no", "never", false],
    ["a read a replica refused as a write", refusal(), on(true, "read"), "DATABASE_ERROR", "no", "now", false],
    ["a conflict", error("SERIALIZATION_FAILURE"), on(false, "write"), "SERIALIZATION_FAILURE", "no", "back off", false],
    ["a statement timeout", error("STATEMENT_TIMEOUT"), on(false, "write"), "STATEMENT_TIMEOUT", "no", "never", false],
    ["a constraint violation", error("DATABASE_ERROR"), on(false, "write"), "DATABASE_ERROR", "no", "never", false],
    ["a pool wait where the primary no longer is", error("POOL_TIMEOUT"), on(false, "write", { unit: "acquire", stillServes: false }), "PRIMARY_UNAVAILABLE", "no", "now", false],
    ["a pool wait on a replica that no longer serves reads", error("POOL_TIMEOUT"), on(true, "read", { unit: "acquire", stillServes: false }), "CONNECTION_LOST", "no", "now", false],
    ["a pool wait where the topology still points", error("POOL_TIMEOUT"), on(false, "write", { unit: "acquire", stillServes: true }), "POOL_TIMEOUT", "no", "never", false],
    ["a stream's session lost after it opened", error("OUTCOME_UNKNOWN"), on(false, "read", { unit: "open stream" }), "OUTCOME_UNKNOWN", "maybe", "never", true],
    ["BEGIN lost on the primary", error("OUTCOME_UNKNOWN"), on(false, "write", { unit: "begin" }), "CONNECTION_LOST", "no", "now", true],
    ["a READ ONLY transaction's BEGIN lost", error("OUTCOME_UNKNOWN"), on(true, "read", { unit: "begin" }), "CONNECTION_LOST", "no", "now", false],
    ["a transaction's statement lost", error("OUTCOME_UNKNOWN"), on(false, "write", { unit: "transaction" }), "CONNECTION_LOST", "no", "now", true],
    ["a transaction's statement conflicting", error("SERIALIZATION_FAILURE"), on(false, "write", { unit: "transaction" }), "TRANSACTION_ABORTED", "no", "never", false],
    ["a transaction's write refused by a demoted primary", refusal(), on(false, "write", { unit: "transaction", instanceReadOnly: true }), "DATABASE_ERROR", "no", "never", true],
    ["a READ ONLY transaction's statement lost", error("OUTCOME_UNKNOWN"), on(false, "read", { unit: "transaction" }), "CONNECTION_LOST", "no", "now", false],
    ["a bug", new GatewayError("INTERNAL_ERROR", "bug"), on(false, "write"), "INTERNAL_ERROR", "maybe", "never", false],
  ];
  it.each(table)("%s", (_what, err, context, code, applied, retry, failoverSign) => {
    const outcome = outcomeOf(err, context);
    expect({ code: outcome.code, applied: outcome.applied, retry: outcome.retry, failoverSign: outcome.failoverSign }).toEqual({ code, applied, retry, failoverSign });
    expect((outcome.error as GatewayError).code).toBe(code);
  });

  it("marks only a read a replica refused as one to run on the primary as a write", () => {
    expect(outcomeOf(refusal(), on(true, "read")).runAsWrite).toBe(true);
    expect(outcomeOf(refusal(), on(false, "read")).runAsWrite).toBe(false);
    expect(outcomeOf(error("DATABASE_ERROR"), on(true, "read")).runAsWrite).toBe(false);
  });

  it("passes anything but a GatewayError on unchanged, with no failover sign", () => {
    const bug = new TypeError("x");
    expect(outcomeOf(bug, on(false, "write"))).toMatchObject({ error: bug, code: "INTERNAL_ERROR", failoverSign: false });
  });
});

describe("what a failure inside a unit's own body means", () => {
  // unit, what failed → the code answered
  const table: [Unit, GatewayError, ErrorCode][] = [
    ["statement in parts", error("STATEMENT_TIMEOUT"), "OUTCOME_UNKNOWN"],
    ["statement in parts", error("SERIALIZATION_FAILURE"), "OUTCOME_UNKNOWN"],
    ["statement in parts", error("CONNECTION_LOST"), "OUTCOME_UNKNOWN"],
    ["statement in parts", error("DATABASE_ERROR"), "DATABASE_ERROR"],
    ["read only", error("OUTCOME_UNKNOWN"), "CONNECTION_LOST"],
    ["read only", error("DATABASE_ERROR", { refusedAsWrite: true }), "FORBIDDEN"],
    ["read only", error("DATABASE_ERROR"), "DATABASE_ERROR"],
    ["batch", error("OUTCOME_UNKNOWN"), "CONNECTION_LOST"],
    ["batch", error("SERIALIZATION_FAILURE"), "SERIALIZATION_FAILURE"],
    ["statement", error("OUTCOME_UNKNOWN"), "OUTCOME_UNKNOWN"],
  ];
  it.each(table)("in %s, %o answers its code", (unit, err, code) => {
    expect((unitFailure(err, unit) as GatewayError).code).toBe(code);
  });

  it("keeps the database's account when a failure is reworded", () => {
    const database = { sqlstate: "40001", message: "could not serialize" };
    expect((unitFailure(error("SERIALIZATION_FAILURE", { database }), "statement in parts") as GatewayError).database).toEqual(database);
  });

  it("answers a keyed write whose earlier COMMIT went unanswered with an unknown outcome, but a reused key as it is", () => {
    expect((keyedFailure(error("PRIMARY_UNAVAILABLE", { attempts: 3 }), true) as GatewayError).code).toBe("OUTCOME_UNKNOWN");
    expect((keyedFailure(error("PRIMARY_UNAVAILABLE", { attempts: 3 }), true) as GatewayError).attempts).toBe(3);
    expect((keyedFailure(error("IDEMPOTENCY_KEY_REUSED"), true) as GatewayError).code).toBe("IDEMPOTENCY_KEY_REUSED");
    expect((keyedFailure(error("PRIMARY_UNAVAILABLE"), false) as GatewayError).code).toBe("PRIMARY_UNAVAILABLE");
  });
});

describe("the questions the layers below execution ask of a failure (failure-meaning.ts)", () => {
  const codes = Object.keys(ERROR_CODES) as ErrorCode[];
  const answering = (question: (err: unknown) => boolean) => codes.filter((code) => question(error(code)));

  it("answers each from the code's meaning, and no for anything but a GatewayError", () => {
    expect(answering(isDatabaseRefusal)).toEqual(["DATABASE_ERROR"]);
    expect(answering(outcomeUnknown)).toEqual(["OUTCOME_UNKNOWN"]);
    expect(answering(isIdempotencyUnavailable)).toEqual(["IDEMPOTENCY_UNAVAILABLE"]);
    expect(answering(waitedOutForSession)).toEqual(["POOL_TIMEOUT"]);
    expect(answering(transactionIsOver)).toEqual(["TRANSACTION_NOT_FOUND", "TRANSACTION_EXPIRED", "TRANSACTION_ABORTED"]);
    expect(answering(sessionLost).sort()).toEqual(["CONNECTION_LOST", "OUTCOME_UNKNOWN"]);
    for (const question of [isDatabaseRefusal, outcomeUnknown, isIdempotencyUnavailable, waitedOutForSession, transactionIsOver, sessionLost, isReadOnlyRefusal]) {
      expect(question(new Error("DATABASE_ERROR")), question.name).toBe(false);
    }
  });

  it("takes a write refused as read-only for a read-only refusal only when the database refused it", () => {
    expect(isReadOnlyRefusal(refusal())).toBe(true);
    expect(isReadOnlyRefusal(error("DATABASE_ERROR"))).toBe(false);
    expect(isReadOnlyRefusal(error("OUTCOME_UNKNOWN", { refusedAsReadOnly: true }))).toBe(false);
  });
});
