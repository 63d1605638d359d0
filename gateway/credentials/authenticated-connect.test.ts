import { describe, expect, it } from "vitest";
import { connectAuthenticated } from "./authenticated-connect.js";
import { type DatabaseCredentials, type DatabaseLogin, databaseLogin, sameLogin } from "./database-credentials.js";

const TARGET = { host: "db.example", port: 5432 };
class Refused extends Error {}

/** A source that holds `logins` in turn: each refusal moves to the next one, if any. */
function sourceOf(...passwords: string[]): DatabaseCredentials & { refusals: number } {
  let index = 0;
  return {
    kind: "password",
    refusals: 0,
    prepare: async () => undefined,
    current: async () => databaseLogin("app", passwords[index] ?? ""),
    async afterAuthenticationFailure(failed: DatabaseLogin) {
      this.refusals++;
      if (!sameLogin(failed, databaseLogin("app", passwords[index] ?? ""))) return true;
      if (index + 1 >= passwords.length) return false;
      index++;
      return true;
    },
  };
}

/** A server that accepts one password; records what each attempt sent. */
function serverAccepting(password: string) {
  const sent: (string | undefined)[] = [];
  const open = async (login: DatabaseLogin | undefined) => {
    sent.push(login?.password);
    if (login?.password !== password) throw new Refused("password authentication failed");
    return `session as ${login.user}`;
  };
  return { sent, open };
}

const attempt = (credentials: DatabaseCredentials | undefined, open: (login: DatabaseLogin | undefined) => Promise<string>) => ({
  credentials,
  target: TARGET,
  timeoutMs: 1000,
  open,
  isAuthenticationFailure: (err: unknown) => err instanceof Refused,
  describe: (err: unknown) => (err as Error).message,
});

describe("connectAuthenticated", () => {
  it("opens with the URL's credentials when there is no source", async () => {
    const server = serverAccepting("x");
    await expect(connectAuthenticated(attempt(undefined, server.open))).rejects.toThrow(Refused);
    expect(server.sent).toEqual([undefined]);
  });

  it("retries once with the login the source found after a refusal", async () => {
    const source = sourceOf("old", "new");
    const server = serverAccepting("new");
    await expect(connectAuthenticated(attempt(source, server.open))).resolves.toBe("session as app");
    expect(server.sent).toEqual(["old", "new"]);
  });

  it("does not retry when the source has nothing newer", async () => {
    const source = sourceOf("old");
    const server = serverAccepting("new");
    await expect(connectAuthenticated(attempt(source, server.open))).rejects.toThrow("password authentication failed");
    expect(server.sent).toEqual(["old"]);
  });

  it("retries at most once", async () => {
    const source = sourceOf("one", "two", "three");
    const server = serverAccepting("three");
    await expect(connectAuthenticated(attempt(source, server.open))).rejects.toThrow(Refused);
    expect(server.sent).toEqual(["one", "two"]);
  });

  it("leaves other failures alone: no refresh, no retry", async () => {
    const source = sourceOf("old", "new");
    const open = async () => {
      throw new Error("connect ECONNREFUSED");
    };
    await expect(connectAuthenticated(attempt(source, open))).rejects.toThrow("ECONNREFUSED");
    expect(source.refusals).toBe(0);
  });

  it("says both what the server refused and why the refresh failed", async () => {
    const source: DatabaseCredentials = {
      ...sourceOf("old"),
      afterAuthenticationFailure: () => Promise.reject(new Error("cannot read secret arn:x: AccessDeniedException")),
    };
    const server = serverAccepting("new");
    await expect(connectAuthenticated(attempt(source, server.open))).rejects.toThrow(
      "password authentication failed; reading the credentials again failed: cannot read secret arn:x: AccessDeniedException",
    );
  });
});
