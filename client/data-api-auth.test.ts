import { describe, expect, it } from "vitest";
import { asAwsSdkV2, poolgateRequestHandler } from "./data-api-auth.js";

describe("poolgateRequestHandler", () => {
  it("adds the credential and extra headers, then hands the request to the inner handler", async () => {
    const seen: unknown[] = [];
    let destroyed = false;
    const handler = poolgateRequestHandler({
      auth: { header: () => Promise.resolve("Bearer t0k3n") },
      headers: { "x-poolgate-extensions": "read-replicas" },
      handler: {
        handle: (request: unknown) => {
          seen.push(request);
          return Promise.resolve({ response: { statusCode: 200 } });
        },
        destroy: () => {
          destroyed = true;
        },
      },
    });
    const output = await handler.handle({ method: "POST", headers: { host: "gw" } });
    expect(output).toEqual({ response: { statusCode: 200 } });
    expect(seen).toEqual([{ method: "POST", headers: { host: "gw", "x-poolgate-extensions": "read-replicas", "x-poolgate-auth": "Bearer t0k3n" } }]);
    handler.destroy();
    expect(destroyed).toBe(true);
  });
});

describe("asAwsSdkV2", () => {
  it("gives a v3 client the v2 namespace shape: new RDSDataService().executeStatement(params).promise()", async () => {
    const calls: [string, unknown][] = [];
    const record =
      (name: string) =>
      (input: unknown): Promise<unknown> => {
        calls.push([name, input]);
        return Promise.resolve({ name });
      };
    const AWS = asAwsSdkV2({
      executeStatement: record("executeStatement"),
      batchExecuteStatement: record("batchExecuteStatement"),
      beginTransaction: record("beginTransaction"),
      commitTransaction: record("commitTransaction"),
      rollbackTransaction: record("rollbackTransaction"),
    });
    const service = new AWS.RDSDataService({ region: "ignored" });
    expect(await service.executeStatement({ sql: "select 1" }).promise()).toEqual({ name: "executeStatement" });
    expect(await service.rollbackTransaction({ transactionId: "t" }).promise()).toEqual({ name: "rollbackTransaction" });
    expect(calls).toEqual([
      ["executeStatement", { sql: "select 1" }],
      ["rollbackTransaction", { transactionId: "t" }],
    ]);
  });
});
