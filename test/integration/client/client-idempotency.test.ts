/**
 * The client SDK's idempotency keys against a real gateway and the real local PostgreSQL: a key on
 * every write, the same key on each of its retries, so that a write whose answer was lost during
 * COMMIT (the commit cutter) is sent again and answered from the gateway's record, applied once.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type OutgoingRequest, PoolgateError } from "../../../client/index.js";
import { type CommitCutter, startCommitCutter } from "../../support/commit-cutter.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

let db: TestDatabase;
let cutter: CommitCutter;
let gw: TestGateway;

/** The JSON bodies the client sent, one per attempt. */
function recorder(): { bodies: Record<string, unknown>[]; sign: (request: OutgoingRequest) => Record<string, string> } {
  const bodies: Record<string, unknown>[] = [];
  return { bodies, sign: (request) => (bodies.push(JSON.parse(request.body) as Record<string, unknown>), {}) };
}

const count = async () => Number((await db.admin.query<{ n: string }>("select count(*) as n from orders")).rows[0]?.n);

beforeAll(async () => {
  db = await createTestDatabase();
  await db.admin.query("create table orders (id serial primary key, item text not null)");
  cutter = await startCommitCutter(Number(new URL(db.url).port || 5432));
  // One attempt in the gateway: an unknown outcome reaches the client, whose retry must settle it.
  gw = await startTestGateway({ clusters: { default: { writerUrl: cutter.url(db.url) } }, pool: { maxSize: 2, minIdle: 0 }, retry: { maxAttempts: 1 } });
});

afterAll(async () => {
  await gw?.stop();
  await cutter?.close();
  await db?.drop();
});

describe("the client's idempotency keys", () => {
  it("sends a write again with the same key after OUTCOME_UNKNOWN, and gets the recorded answer: applied once", async () => {
    const { bodies, sign } = recorder();
    const client = createClient({ url: gw.baseUrl, sign, retry: { maxAttempts: 3, baseDelayMs: 1 } });
    try {
      const before = await count();
      const lost = cutter.arm("after");
      const result = await client.query("insert into orders (item) values ($1) returning id", ["book"]);
      await lost;
      expect(result.replayed).toBe(true);
      expect(result.rows).toHaveLength(1);
      expect(bodies).toHaveLength(2);
      expect(typeof bodies[0]?.idempotencyKey).toBe("string");
      expect(bodies[1]?.idempotencyKey).toBe(bodies[0]?.idempotencyKey);
      expect(await count()).toBe(before + 1);
    } finally {
      await client.close();
    }
  });

  it("sends a transaction's commit again with its key after OUTCOME_UNKNOWN: committed once", async () => {
    const { bodies, sign } = recorder();
    const client = createClient({ url: gw.baseUrl, sign, retry: { maxAttempts: 3, baseDelayMs: 1 } });
    try {
      const before = await count();
      let lost: Promise<void> | undefined;
      const value = await client.transaction(async (tx) => {
        await tx.query("insert into orders (item) values ($1)", ["lamp"]);
        lost = cutter.arm("after");
        return "done";
      });
      await lost;
      expect(value).toBe("done");
      const commits = bodies.filter((body) => "idempotencyKey" in body && !("sql" in body));
      expect(commits).toHaveLength(2);
      expect(commits[1]?.idempotencyKey).toBe(commits[0]?.idempotencyKey);
      expect(await count()).toBe(before + 1);
    } finally {
      await client.close();
    }
  });

  it("sends no key with reads marked as such or when turned off, and the caller's own key as it is", async () => {
    const { bodies, sign } = recorder();
    const client = createClient({ url: gw.baseUrl, sign });
    const off = createClient({ url: gw.baseUrl, sign, idempotency: false });
    try {
      await client.query("select 1", [], { intent: "read" });
      await client.batch([{ sql: "select 1" }], { readOnly: true });
      await off.query("insert into orders (item) values ('pen')");
      await client.query("insert into orders (item) values ('cup')", [], { idempotencyKey: false });
      expect(bodies.every((body) => !("idempotencyKey" in body))).toBe(true);
      const mine = randomUUID();
      const first = await client.query("insert into orders (item) values ('mug')", [], { idempotencyKey: mine });
      const again = await client.query("insert into orders (item) values ('mug')", [], { idempotencyKey: mine });
      expect(bodies.at(-1)?.idempotencyKey).toBe(mine);
      expect(first.replayed).toBeUndefined();
      expect(again.replayed).toBe(true);
      const batch = await client.batch([{ sql: "insert into orders (item) values ('a')" }]);
      expect(typeof bodies.at(-1)?.idempotencyKey).toBe("string");
      expect(batch[0]?.rowCount).toBe(1);
    } finally {
      await client.close();
      await off.close();
    }
  });

  it("drops its own key for SQL that commits by itself (nothing ran), and lets the gateway refuse a key the caller passed", async () => {
    const { bodies, sign } = recorder();
    const client = createClient({ url: gw.baseUrl, sign });
    try {
      const sql = "begin; insert into orders (item) values ('x'); insert into orders (item) values ('y'); commit";
      const before = await count();
      await client.query(sql);
      expect(bodies).toHaveLength(2);
      expect("idempotencyKey" in (bodies[1] ?? {})).toBe(false);
      expect(await count()).toBe(before + 2);
      const refused = await client.query(sql, [], { idempotencyKey: randomUUID() }).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(PoolgateError);
      expect((refused as PoolgateError).code).toBe("INVALID_REQUEST");
      expect(await count()).toBe(before + 2);
    } finally {
      await client.close();
    }
  });
});
