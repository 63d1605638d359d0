/**
 * The Valkey user the CDK stack gives the gateway (`-c cache=valkey`: cdk/constructs/valkey-result-cache.ts)
 * is enough for the result cache and no more: a real redis-server (Valkey speaks the same ACLs) with
 * that user's access string, a gateway on the real local PostgreSQL logged in as it. Cached reads hit,
 * a write invalidates them, and the user is refused keys outside the gateway's prefix and commands
 * that flush, list keys or reconfigure.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VALKEY_ACCESS_STRING, VALKEY_KEY_PREFIX, VALKEY_USER_NAME } from "../../../cdk/constructs/valkey-result-cache.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";
import { startTestValkey, type TestValkey } from "../../support/valkey.js";
import { waitFor } from "../../support/wait-for.js";

const PASSWORD = "generatedPassword0123456789abcdef";

let db: TestDatabase;
let valkey: TestValkey;
let admin: Redis;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.admin.query("create table ledger (id int primary key, n bigint not null)");
  await db.admin.query("insert into ledger values (1, 0)");
  valkey = await startTestValkey();
  admin = new Redis(valkey.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  await admin.connect();
  await admin.call("ACL", "SETUSER", VALKEY_USER_NAME, "reset", `>${PASSWORD}`, ...VALKEY_ACCESS_STRING.split(" "));
  gw = await startTestGateway({
    clusters: { default: { writerUrl: db.url } },
    cache: { store: "valkey", valkey: { url: `redis://${VALKEY_USER_NAME}:${PASSWORD}@127.0.0.1:${valkey.port}`, keyPrefix: VALKEY_KEY_PREFIX, commandTimeoutMs: 1000 } },
  });
  // The store vouches for the cache once it has logged in and renewed its epochs (MULTI of SETs).
  await waitFor(async () => (await gw.post("/v1/query", { sql: "select 1 as one", cache: { ttlMs: 1000 } })).body.cache !== "bypass", 10000, "the result cache in use as the stack's Valkey user");
});

afterAll(async () => {
  await gw?.stop();
  admin?.disconnect();
  await valkey?.close();
  await db?.drop();
});

describe("the stack's Valkey user", () => {
  it("serves cached reads and invalidates them on a write", async () => {
    const read = () => gw.post("/v1/query", { sql: "select n from ledger where id = 1", cache: { ttlMs: 60000 } });
    expect((await read()).body).toMatchObject({ cache: "miss", rows: [{ n: "0" }] });
    expect((await read()).body).toMatchObject({ cache: "hit", rows: [{ n: "0" }] });
    expect((await gw.post("/v1/query", { sql: "update ledger set n = 1 where id = 1" })).status).toBe(200);
    expect((await read()).body).toMatchObject({ cache: "miss", rows: [{ n: "1" }] });
    expect((await read()).body).toMatchObject({ cache: "hit", rows: [{ n: "1" }] });
    // What the gateway wrote is under its prefix.
    expect((await admin.keys("*")).every((key) => key.startsWith(`${VALKEY_KEY_PREFIX}:`))).toBe(true);
  });

  it("is refused other keys and commands that flush, list keys or reconfigure", async () => {
    const user = new Redis(`redis://${VALKEY_USER_NAME}:${PASSWORD}@127.0.0.1:${valkey.port}`, { lazyConnect: true, maxRetriesPerRequest: 0 });
    await user.connect();
    try {
      await expect(user.get(`${VALKEY_KEY_PREFIX}:probe`)).resolves.toBeNull();
      await expect(user.get("sessions:1")).rejects.toThrow(/NOPERM/);
      await expect(user.flushall()).rejects.toThrow(/NOPERM/);
      await expect(user.keys(`${VALKEY_KEY_PREFIX}:*`)).rejects.toThrow(/NOPERM/);
      await expect(user.call("CONFIG", "SET", "maxmemory", "1")).rejects.toThrow(/NOPERM/);
    } finally {
      user.disconnect();
    }
  });
});
