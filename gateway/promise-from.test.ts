import { describe, expect, it } from "vitest";
import { promiseFrom } from "./promise-from.js";

describe("promiseFrom", () => {
  it("answers the promise the step returns", async () => {
    await expect(promiseFrom((n: number) => Promise.resolve(n + 1), 6)).resolves.toBe(7);
    const failure = new Error("failed later");
    await expect(promiseFrom(() => Promise.reject(failure))).rejects.toBe(failure);
  });

  it("turns a synchronous throw into the rejection, with the very value thrown", async () => {
    const failure = new Error("refused at once");
    let called = 0;
    const answer = promiseFrom((n: number): Promise<number> => {
      called += n;
      throw failure;
    }, 1);
    expect(called).toBe(1);
    await expect(answer).rejects.toBe(failure);
    await expect(
      promiseFrom((): Promise<number> => {
        // A value that is not an Error, as third-party code may throw.
        // eslint-disable-next-line @typescript-eslint/only-throw-error
        throw "not an Error";
      }),
    ).rejects.toBe("not an Error");
  });
});
