import { describe, expect, it } from "vitest";
import { ManualClock } from "../clock.js";
import type { SessionTarget } from "./database-credentials.js";
import { IamTokenCredentials, regionOfRdsHost, type TokenMinter } from "./iam-token-credentials.js";

const WRITER = { host: "app.cluster-abc.us-east-1.rds.amazonaws.com", port: 5432 };
const READER = { host: "app.cluster-ro-abc.us-east-1.rds.amazonaws.com", port: 5432 };
const MINUTE = 60_000;

/** Mints "token-<host>-<n>", a new n each call, like a signer whose clock moved; `gate` holds a mint. */
function countingMinter() {
  const minted: string[] = [];
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  const mint: TokenMinter = async (target: SessionTarget, user: string) => {
    const token = `token-${user}-${target.host}-${minted.length + 1}`;
    minted.push(token);
    await gate;
    return token;
  };
  return {
    mint,
    minted,
    hold: () => {
      gate = new Promise((resolve) => (open = resolve));
    },
    release: () => open?.(),
  };
}

function setUp() {
  const clock = new ManualClock(Date.UTC(2030, 0, 1));
  const minter = countingMinter();
  const credentials = new IamTokenCredentials("app_user", minter.mint, WRITER, { clock });
  return { clock, minter, credentials };
}

describe("IamTokenCredentials", () => {
  it("mints a token for the writer at start and reuses it for ten minutes", async () => {
    const { clock, minter, credentials } = setUp();
    await credentials.prepare();
    expect(minter.minted).toHaveLength(1);
    clock.advance(10 * MINUTE - 1);
    expect(await credentials.current(WRITER)).toMatchObject({ user: "app_user", password: `token-app_user-${WRITER.host}-1` });
    expect(minter.minted).toHaveLength(1);
  });

  it("mints again once less than five minutes of the fifteen remain", async () => {
    const { clock, minter, credentials } = setUp();
    await credentials.current(WRITER);
    clock.advance(10 * MINUTE);
    expect((await credentials.current(WRITER)).password).toBe(`token-app_user-${WRITER.host}-2`);
    clock.advance(9 * MINUTE);
    expect((await credentials.current(WRITER)).password).toBe(`token-app_user-${WRITER.host}-2`);
    expect(minter.minted).toHaveLength(2);
  });

  it("keeps one token per endpoint: a token is signed for one host and port", async () => {
    const { minter, credentials } = setUp();
    const writer = await credentials.current(WRITER);
    const reader = await credentials.current(READER);
    expect(writer.password).not.toBe(reader.password);
    expect(reader.password).toContain(READER.host);
    await credentials.current(READER);
    expect(minter.minted).toHaveLength(2);
  });

  it("mints again after the server refused the cached token", async () => {
    const { minter, credentials } = setUp();
    const refused = await credentials.current(WRITER);
    expect(await credentials.afterAuthenticationFailure(refused, WRITER)).toBe(true);
    expect((await credentials.current(WRITER)).password).toBe(`token-app_user-${WRITER.host}-2`);
    expect(minter.minted).toHaveLength(2);
  });

  it("reports no change when the new token is the refused one (signed within the same second)", async () => {
    const clock = new ManualClock(0);
    const credentials = new IamTokenCredentials("app_user", async () => "same-token", WRITER, { clock });
    const refused = await credentials.current(WRITER);
    expect(await credentials.afterAuthenticationFailure(refused, WRITER)).toBe(false);
  });

  it("shares one signing among concurrent new sessions and concurrent refusals", async () => {
    const { minter, credentials } = setUp();
    minter.hold();
    const sessions = Promise.all(Array.from({ length: 10 }, () => credentials.current(WRITER)));
    minter.release();
    const logins = await sessions;
    expect(new Set(logins.map((login) => login.password)).size).toBe(1);
    const [refused] = logins;
    if (refused === undefined) throw new Error("no login");
    minter.hold();
    const refusals = Promise.all(Array.from({ length: 10 }, () => credentials.afterAuthenticationFailure(refused, WRITER)));
    minter.release();
    expect(await refusals).toEqual(Array.from({ length: 10 }, () => true));
    expect(minter.minted).toHaveLength(2);
  });

  it("passes a minting failure on to the session that asked", async () => {
    const credentials = new IamTokenCredentials("app_user", () => Promise.reject(new Error("no AWS credentials")), WRITER);
    await expect(credentials.prepare()).rejects.toThrow("no AWS credentials");
  });
});

describe("regionOfRdsHost", () => {
  it("reads the region from RDS cluster, reader, instance and China host names", () => {
    expect(regionOfRdsHost("app.cluster-abc123.eu-west-1.rds.amazonaws.com")).toBe("eu-west-1");
    expect(regionOfRdsHost("app.cluster-ro-abc123.us-gov-west-1.rds.amazonaws.com")).toBe("us-gov-west-1");
    expect(regionOfRdsHost("instance-1.abc123.ap-southeast-2.rds.amazonaws.com")).toBe("ap-southeast-2");
    expect(regionOfRdsHost("app.cluster-abc.cn-north-1.rds.amazonaws.com.cn")).toBe("cn-north-1");
  });

  it("finds none in other names", () => {
    expect(regionOfRdsHost("127.0.0.1")).toBeUndefined();
    expect(regionOfRdsHost("db.internal.example.com")).toBeUndefined();
  });
});
