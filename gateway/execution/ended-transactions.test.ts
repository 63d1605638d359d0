import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.js";
import { commitFailure, EndedTransactions } from "./ended-transactions.js";

describe("ended transactions", () => {
  it("tell the principal that began one how it ended, and nobody else", () => {
    const ended = new EndedTransactions();
    ended.remember("t1", "alice", "TRANSACTION_ABORTED", "transaction t1 was rolled back: it lost its connection");
    const answer = ended.answerFor("t1", "alice");
    expect(answer).toBeInstanceOf(GatewayError);
    expect(answer).toMatchObject({ code: "TRANSACTION_ABORTED", message: "transaction t1 was rolled back: it lost its connection" });
    expect(ended.answerFor("t1", "mallory")).toBeUndefined();
    expect(ended.answerFor("t2", "alice")).toBeUndefined();
    expect(ended.has("t1")).toBe(true);
  });

  it("forget the oldest first once the memory is full", () => {
    const ended = new EndedTransactions();
    for (let i = 0; i <= 10000; i++) ended.remember(`t${i}`, "", "TRANSACTION_NOT_FOUND", "committed");
    expect(ended.has("t0")).toBe(false);
    expect(ended.has("t1")).toBe(true);
    expect(ended.has("t10000")).toBe(true);
  });
});

describe("a failed COMMIT", () => {
  it("whose session was gone before it was sent says that only running the whole transaction again helps", () => {
    const { error, fate } = commitFailure("t1", new GatewayError("CONNECTION_LOST", "the database session closed before the statement was sent"));
    expect(error).toMatchObject({ code: "CONNECTION_LOST" });
    expect((error as GatewayError).message).toMatch(/retrying the COMMIT cannot help, only running the whole transaction again/);
    expect(fate[0]).toBe("TRANSACTION_ABORTED");
    expect(fate[1]).toMatch(/rolled back: it lost its connection before COMMIT/);
  });

  it("whose session died after it was sent has an unknown outcome, and later calls say so", () => {
    const { error, fate } = commitFailure("t1", new GatewayError("OUTCOME_UNKNOWN", "the database session died while the statement ran"));
    expect(error).toMatchObject({ code: "OUTCOME_UNKNOWN" });
    expect(fate).toEqual(["TRANSACTION_NOT_FOUND", expect.stringMatching(/COMMIT whose outcome is unknown/) as unknown]);
  });

  it("that conflicted rolled the transaction back: run it again from the start", () => {
    const database = { sqlstate: "40001", message: "could not serialize access" };
    const { error, fate } = commitFailure("t1", new GatewayError("SERIALIZATION_FAILURE", "could not serialize access", { database }));
    expect(error).toMatchObject({ code: "TRANSACTION_ABORTED", database });
    expect(fate[0]).toBe("TRANSACTION_ABORTED");
  });
});
