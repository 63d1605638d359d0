/**
 * Exactly-once writes under idempotency keys, one contract over both engines against the real local
 * servers: the same key replays the recorded answer (after success, after an unknown outcome at
 * COMMIT, on a second gateway sharing the database, to ten concurrent callers), a different request
 * under the key is refused, keys expire, and keys never cross principals. Every test counts the rows
 * in the target table: the write was applied exactly once.
 */
import { randomUUID } from "node:crypto";
import { BatchExecuteStatementCommand, BeginTransactionCommand, CommitTransactionCommand, ExecuteStatementCommand } from "@aws-sdk/client-rds-data";
import { addIdempotencyKeys } from "../../../client/data-api.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../../gateway/clock.js";
import type { GatewayConfigInput } from "../../../gateway/config/schema.js";
import { bearer, type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { type CommitCutter, startCommitCutter } from "../../support/commit-cutter.js";
import { dataApiClient } from "../../support/data-api-client.js";
import { type HttpResult, startTestGateway, type TestGateway } from "../../support/gateway.js";
import { waitFor } from "../../support/wait-for.js";

/** A database of the target's own for one suite, and direct SQL on it (not through the gateway). */
export interface IdempotencyDatabase {
  url: string;
  /** The server's port, for the commit cutter in front of it. */
  port: number;
  run(sql: string): Promise<void>;
  count(table: string): Promise<number>;
  /** PostgreSQL: ends (pg_terminate_backend) the gateway's sessions running COMMIT (with the position read sent beside it); how many. */
  killCommitting?: (() => Promise<number>) | undefined;
  drop(): Promise<void>;
}

export interface IdempotencyTarget {
  name: string;
  engine: "postgres" | "mysql";
  createDatabase(): Promise<IdempotencyDatabase>;
  /** PostgreSQL tokens' form and order: WAL positions unless said (Aurora's are the writer's clock, "T" and microseconds). */
  tokens?: { form: RegExp; order(token: string): number };
}

const REPLAY = "x-poolgate-idempotent-replay";
const DATA_API = { resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:poolgate-test", secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:app-AbCdEf" };
const TOKENS = { alice: "alice-token-0123456789abcdef012345", bob: "bob-token-0123456789abcdef01234567" };

const WAL_TOKENS = { form: /^[0-9A-F]+\/[0-9A-F]+$/, order: (lsn: string) => lsn.split("/").reduce((high, low) => high * 2 ** 32 + Number.parseInt(low, 16), 0) };

export function defineIdempotencySuite(target: IdempotencyTarget): void {
  const pg = target.engine === "postgres";
  const p = (n: number) => (pg ? `$${n}` : "?");
  let tableNumber = 0;

  describe(`idempotency keys on ${target.name}`, () => {
    let db: IdempotencyDatabase;
    let gw: TestGateway;
    const gateways: TestGateway[] = [];
    const cleanups: (() => Promise<void>)[] = [];

    const start = async (config: GatewayConfigInput = {}, clock?: ManualClock): Promise<TestGateway> => {
      const started = await startTestGateway({ clusters: { default: { writerUrl: db.url } }, pool: { maxSize: 4, acquireTimeoutMs: 5000 }, ...config }, clock);
      gateways.push(started);
      return started;
    };

    /** A fresh target table; its name is unique in the suite. */
    const newTable = async (): Promise<string> => {
      const name = `items_${++tableNumber}`;
      await db.run(
        pg
          ? `CREATE TABLE ${name} (id serial PRIMARY KEY, name text NOT NULL)`
          : `CREATE TABLE ${name} (id int AUTO_INCREMENT PRIMARY KEY, name varchar(100) NOT NULL) ENGINE=InnoDB`,
      );
      return name;
    };
    const insert = (table: string) => `insert into ${table} (name) values (${p(1)})`;
    const ok = (response: HttpResult): HttpResult => {
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response;
    };

    beforeAll(async () => {
      db = await target.createDatabase();
      gw = await start();
    });

    afterAll(async () => {
      for (const started of gateways) await started.stop();
      for (const cleanup of cleanups) await cleanup();
      await db?.drop();
    });

    it("replays a statement's recorded answer without running it again", async () => {
      const table = await newTable();
      const key = randomUUID();
      const first = ok(await gw.post("/v1/query", { sql: insert(table), params: ["a"], idempotencyKey: key }));
      expect(first.body).toMatchObject({ command: "INSERT", rowCount: 1, attempts: 1 });
      expect(first.body.replayed).toBeUndefined();
      expect(first.headers.get(REPLAY)).toBeNull();
      // The header carries the key as well as the body.
      const again = ok(await gw.post("/v1/query", { sql: insert(table), params: ["a"] }, { "idempotency-key": key }));
      expect(again.body).toMatchObject({ command: "INSERT", rowCount: 1, replayed: true });
      expect(again.headers.get(REPLAY)).toBe("true");
      const recorded = (body: Record<string, unknown>) => JSON.stringify({ ...body, attempts: undefined, consistencyToken: undefined, replayed: undefined });
      expect(recorded(again.body as Record<string, unknown>)).toBe(recorded(first.body as Record<string, unknown>));
      expect(await db.count(table)).toBe(1);
      if (pg) {
        // The write's token came with its COMMIT; a replay's is read when it is answered (never earlier).
        const tokens = target.tokens ?? WAL_TOKENS;
        expect(first.body.consistencyToken).toMatch(tokens.form);
        expect(again.body.consistencyToken).toMatch(tokens.form);
        expect(tokens.order(again.body.consistencyToken as string)).toBeGreaterThanOrEqual(tokens.order(first.body.consistencyToken as string));
      }
    });

    it("replays a batch, and an interactive transaction's commit", async () => {
      const table = await newTable();
      const key = randomUUID();
      const batch = { statements: [{ sql: insert(table), params: ["b1"] }, { sql: insert(table), params: ["b2"] }], idempotencyKey: key };
      const first = ok(await gw.post("/v1/batch", batch));
      expect(first.body.results).toHaveLength(2);
      const again = ok(await gw.post("/v1/batch", batch));
      expect(again.body).toMatchObject({ replayed: true, results: first.body.results });
      expect(await db.count(table)).toBe(2);

      const begun = await gw.post("/v1/transactions", {});
      const id = begun.body.transactionId as string;
      ok(await gw.post("/v1/query", { sql: insert(table), params: ["t"], transactionId: id }));
      const commitKey = randomUUID();
      const committed = ok(await gw.post(`/v1/transactions/${id}/commit`, { idempotencyKey: commitKey }));
      expect(committed.body).toMatchObject({ transactionId: id, outcome: "committed" });
      expect(committed.body.replayed).toBeUndefined();
      const recommitted = ok(await gw.post(`/v1/transactions/${id}/commit`, {}, { "idempotency-key": commitKey }));
      expect(recommitted.body).toMatchObject({ transactionId: id, outcome: "committed", replayed: true });
      expect(recommitted.headers.get(REPLAY)).toBe("true");
      expect(await db.count(table)).toBe(3);
    });

    it("refuses the key with a different request, running nothing", async () => {
      const table = await newTable();
      const key = randomUUID();
      ok(await gw.post("/v1/query", { sql: insert(table), params: ["x"], idempotencyKey: key }));
      const other = await gw.post("/v1/query", { sql: insert(table), params: ["y"], idempotencyKey: key });
      expect(other.status).toBe(422);
      expect(other.body.error).toMatchObject({ code: "IDEMPOTENCY_KEY_REUSED", retryable: false });
      expect(other.body.error.message).toContain("different request");
      const asBatch = await gw.post("/v1/batch", { statements: [{ sql: insert(table), params: ["x"] }], idempotencyKey: key });
      expect(asBatch.body.error.code).toBe("IDEMPOTENCY_KEY_REUSED");
      // A commit under a key taken by a statement: refused, and the transaction stays open.
      const begun = await gw.post("/v1/transactions", {});
      const id = begun.body.transactionId as string;
      ok(await gw.post("/v1/query", { sql: insert(table), params: ["z"], transactionId: id }));
      const commit = await gw.post(`/v1/transactions/${id}/commit`, { idempotencyKey: key });
      expect(commit.body.error.code).toBe("IDEMPOTENCY_KEY_REUSED");
      expect(await db.count(table)).toBe(1);
      ok(await gw.post(`/v1/transactions/${id}/commit`, {}));
      expect(await db.count(table)).toBe(2);
    });

    it("accepts and ignores a key on a read, and refuses one on a statement inside a transaction or on SQL that commits by itself", async () => {
      const table = await newTable();
      const key = randomUUID();
      for (let i = 0; i < 2; i++) {
        const read = ok(await gw.post("/v1/query", { sql: `select count(*) as n from ${table}`, idempotencyKey: key }));
        expect(read.body.replayed).toBeUndefined();
      }
      const readOnly = (await gw.post("/v1/transactions", { readOnly: true })).body.transactionId as string;
      const ended = ok(await gw.post(`/v1/transactions/${readOnly}/commit`, { idempotencyKey: key }));
      expect(ended.body).toEqual({ transactionId: readOnly, outcome: "committed" });
      // The ignored key was never recorded: a write may use it.
      ok(await gw.post("/v1/query", { sql: insert(table), params: ["r"], idempotencyKey: key }));
      const begun = await gw.post("/v1/transactions", {});
      const inside = await gw.post("/v1/query", { sql: insert(table), params: ["i"], transactionId: begun.body.transactionId, idempotencyKey: randomUUID() });
      expect(inside.status).toBe(400);
      expect(inside.body.error.issues).toEqual([{ path: "idempotencyKey", message: "not allowed inside an interactive transaction" }]);
      ok(await gw.post(`/v1/transactions/${begun.body.transactionId as string}/rollback`, {}));
      const selfCommitting = await gw.post("/v1/query", { sql: `${insert(table).replace(p(1), "'c'")}; commit`, idempotencyKey: randomUUID() });
      expect(selfCommitting.status).toBe(400);
      expect(selfCommitting.body.error.code).toBe("INVALID_REQUEST");
      const malformed = await gw.post("/v1/query", { sql: insert(table), params: ["m"] }, { "idempotency-key": "has space" });
      expect(malformed.body.error.code).toBe("INVALID_REQUEST");
      expect(await db.count(table)).toBe(1);
    });

    it("applies the write of ten concurrent callers with the same key once, and answers each the same", async () => {
      const table = await newTable();
      const key = randomUUID();
      const answers = await Promise.all(Array.from({ length: 10 }, () => gw.post("/v1/query", { sql: `${insert(table)} ${pg ? "returning id" : ""}`, params: ["c"], idempotencyKey: key })));
      for (const answer of answers) ok(answer);
      expect(answers.filter((answer) => answer.body.replayed !== true)).toHaveLength(1);
      const shapes = new Set(answers.map((answer) => JSON.stringify({ rows: answer.body.rows, rowCount: answer.body.rowCount, lastInsertId: answer.body.lastInsertId })));
      expect(shapes.size).toBe(1);
      expect(await db.count(table)).toBe(1);
    });

    it("replays on a second gateway sharing the database", async () => {
      const table = await newTable();
      const other = await start();
      const key = randomUUID();
      ok(await gw.post("/v1/query", { sql: insert(table), params: ["s"], idempotencyKey: key }));
      const there = ok(await other.post("/v1/query", { sql: insert(table), params: ["s"], idempotencyKey: key }));
      expect(there.body.replayed).toBe(true);
      const begun = await gw.post("/v1/transactions", {});
      const id = begun.body.transactionId as string;
      ok(await gw.post("/v1/query", { sql: insert(table), params: ["s2"], transactionId: id }));
      const commitKey = randomUUID();
      ok(await gw.post(`/v1/transactions/${id}/commit`, { idempotencyKey: commitKey }));
      // The other task never saw the transaction: the record says it committed.
      const settled = ok(await other.post(`/v1/transactions/${id}/commit`, { idempotencyKey: commitKey }));
      expect(settled.body).toMatchObject({ transactionId: id, outcome: "committed", replayed: true });
      // A transaction that never committed: the record says so.
      const unknown = await other.post(`/v1/transactions/${randomUUID()}/commit`, { idempotencyKey: randomUUID() });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.message).toContain("did not commit");
      expect(await db.count(table)).toBe(2);
    });

    it("keeps keys per principal: the same key of another principal neither collides nor sees the answer", async () => {
      const table = await newTable();
      const tokens: TokensFile = writeTokensFile(TOKENS);
      cleanups.push(async () => tokens.remove());
      const guarded = await start({
        auth: { bearer: { tokensFile: tokens.path }, principals: { alice: { clusters: { default: "read-write" } }, bob: { clusters: { default: "read-write" } } } },
      });
      const key = randomUUID();
      const body = { sql: `${insert(table)} ${pg ? "returning name" : ""}`, params: ["p"], idempotencyKey: key };
      const alice = ok(await guarded.post("/v1/query", body, bearer(TOKENS.alice)));
      const bob = ok(await guarded.post("/v1/query", body, bearer(TOKENS.bob)));
      expect(alice.body.replayed).toBeUndefined();
      expect(bob.body.replayed).toBeUndefined();
      expect(ok(await guarded.post("/v1/query", body, bearer(TOKENS.alice))).body.replayed).toBe(true);
      expect(await db.count(table)).toBe(2);
    });

    it("forgets keys after their time to live: the same key runs again, and cleanup deletes expired keys", async () => {
      const table = await newTable();
      const clock = new ManualClock(Date.now());
      const timed = await start({ idempotency: { ttlMs: 60_000, cleanupIntervalMs: 0 } }, clock);
      const key = randomUUID();
      const body = { sql: insert(table), params: ["e"], idempotencyKey: key };
      ok(await timed.post("/v1/query", body));
      expect(ok(await timed.post("/v1/query", body)).body.replayed).toBe(true);
      clock.advance(60_001);
      expect(ok(await timed.post("/v1/query", body)).body.replayed).toBeUndefined();
      expect(await db.count(table)).toBe(2);
      ok(await timed.post("/v1/query", { ...body, idempotencyKey: randomUUID() }));
      clock.advance(60_001);
      const cluster = timed.gateway.clusters.get("default");
      expect(await cluster?.idempotency.sweep(5000)).toBeGreaterThanOrEqual(2);
      expect(ok(await timed.post("/v1/query", body)).body.replayed).toBeUndefined();
      expect(await db.count(table)).toBe(4);
    });

    it("takes the key on the Data API surface from x-poolgate-idempotency-key, and replays with x-poolgate-idempotent-replay", async () => {
      const table = await newTable();
      const key = randomUUID();
      const execute = { ...DATA_API, sql: `insert into ${table} (name) values (:name)`, parameters: [{ name: "name", value: { stringValue: "d" } }] };
      const first = ok(await gw.post("/Execute", execute, { "x-poolgate-idempotency-key": key }));
      expect(first.headers.get(REPLAY)).toBeNull();
      const again = ok(await gw.post("/Execute", execute, { "x-poolgate-idempotency-key": key }));
      expect(again.headers.get(REPLAY)).toBe("true");
      expect(again.body).toEqual(first.body);
      const other = await gw.post("/Execute", { ...execute, sql: `insert into ${table} (name) values ('other')` }, { "x-poolgate-idempotency-key": key });
      expect(other.status).toBe(400);
      expect(other.headers.get("x-amzn-errortype")).toBe("BadRequestException");
      expect(await db.count(table)).toBe(1);
    });

    it("keeps an unmodified AWS SDK client's writes exactly-once through addIdempotencyKeys", async () => {
      const table = await newTable();
      const key = randomUUID();
      const keyed = dataApiClient(gw.baseUrl);
      addIdempotencyKeys(keyed, { keyOf: () => key });
      const insertOne = new ExecuteStatementCommand({ ...DATA_API, sql: `insert into ${table} (name) values ('k')` });
      await keyed.send(insertOne);
      await keyed.send(insertOne);
      expect(await db.count(table)).toBe(1);

      // Default keys: a new one per write; statements inside a transaction carry none, its commit does.
      const fresh = dataApiClient(gw.baseUrl);
      addIdempotencyKeys(fresh);
      await fresh.send(new BatchExecuteStatementCommand({ ...DATA_API, sql: `insert into ${table} (name) values (:name)`, parameterSets: [[{ name: "name", value: { stringValue: "b" } }]] }));
      const { transactionId } = await fresh.send(new BeginTransactionCommand(DATA_API));
      await fresh.send(new ExecuteStatementCommand({ ...DATA_API, sql: `insert into ${table} (name) values ('t')`, transactionId }));
      await fresh.send(new CommitTransactionCommand({ ...DATA_API, transactionId }));
      // SQL the gateway cannot key (MySQL DDL commits implicitly): the middleware's own key is dropped.
      await fresh.send(new ExecuteStatementCommand({ ...DATA_API, sql: `create table ${table}_more (id int primary key)` }));
      expect(await db.count(table)).toBe(3);
      expect(await db.count(`${table}_more`)).toBe(0);
      keyed.destroy();
      fresh.destroy();
    });

    describe("when the session is lost during COMMIT", () => {
      let cutter: CommitCutter;
      let cut: TestGateway;
      let once: TestGateway;

      beforeAll(async () => {
        cutter = await startCommitCutter(db.port);
        cleanups.push(() => cutter.close());
        const through = { clusters: { default: { writerUrl: cutter.url(db.url) } }, pool: { maxSize: 2, minIdle: 0, acquireTimeoutMs: 5000 } };
        cut = await start(through);
        // One attempt: the unknown outcome reaches the caller, who sends the request again.
        once = await start({ ...through, retry: { maxAttempts: 1 } });
      });

      it("settles the unknown outcome itself: the write committed once and its recorded answer comes back", async () => {
        const table = await newTable();
        const lost = cutter.arm("after");
        const answer = ok(await cut.post("/v1/query", { sql: insert(table), params: ["u"], idempotencyKey: randomUUID() }));
        await lost;
        expect(answer.body).toMatchObject({ command: "INSERT", rowCount: 1, replayed: true, attempts: 2 });
        expect(await db.count(table)).toBe(1);
      });

      // PostgreSQL's deferred triggers hold a COMMIT open for a real kill; MariaDB has none.
      if (pg) {
        it("runs again a write whose session was killed during its COMMIT (a real server's kill): applied once", async () => {
          const killCommitting = db.killCommitting;
          if (!killCommitting) throw new Error("the PostgreSQL target kills sessions in COMMIT");
          const table = await newTable();
          // The first COMMIT waits in a deferred trigger (a sequence is not rolled back: only the first one waits).
          await db.run(`create sequence ${table}_commits`);
          await db.run(`create function ${table}_slow_commit() returns trigger language plpgsql as $$
            begin if nextval('${table}_commits') = 1 then perform pg_sleep(30); end if; return null; end $$`);
          await db.run(`create constraint trigger ${table}_at_commit after insert on ${table} deferrable initially deferred for each row execute function ${table}_slow_commit()`);
          const answer = gw.post("/v1/query", { sql: insert(table), params: ["killed"], idempotencyKey: randomUUID() });
          await waitFor(async () => (await killCommitting()) > 0, 10000, "the gateway's session in COMMIT");
          const settled = ok(await answer);
          // The killed COMMIT rolled back: the gateway's next attempt claimed the key and ran it.
          expect(settled.body).toMatchObject({ command: "INSERT", rowCount: 1, attempts: 2 });
          expect(settled.body.replayed).toBeUndefined();
          expect(await db.count(table)).toBe(1);
        });
      }

      it("answers OUTCOME_UNKNOWN without retries; the same key then replays a COMMIT that landed and runs one that did not", async () => {
        const table = await newTable();
        for (const mode of ["after", "before"] as const) {
          const key = randomUUID();
          const body = { statements: [{ sql: insert(table), params: [mode] }], idempotencyKey: key };
          const lost = cutter.arm(mode);
          const unknown = await once.post("/v1/batch", body);
          await lost;
          expect(unknown.status, JSON.stringify(unknown.body)).toBe(502);
          expect(unknown.body.error.code).toBe("OUTCOME_UNKNOWN");
          const again = ok(await once.post("/v1/batch", body));
          expect(again.body.replayed).toBe(mode === "after" ? true : undefined);
          expect(ok(await once.post("/v1/batch", body)).body.replayed).toBe(true);
        }
        expect(await db.count(table)).toBe(2);
      });

      it("settles an interactive transaction's commit from the record: committed as a replay, or not committed", async () => {
        const table = await newTable();
        for (const mode of ["after", "before"] as const) {
          const begun = await cut.post("/v1/transactions", {});
          const id = begun.body.transactionId as string;
          ok(await cut.post("/v1/query", { sql: insert(table), params: [mode], transactionId: id }));
          const key = randomUUID();
          const lost = cutter.arm(mode);
          const unknown = await cut.post(`/v1/transactions/${id}/commit`, { idempotencyKey: key });
          await lost;
          expect(unknown.body.error.code).toBe("OUTCOME_UNKNOWN");
          expect(unknown.body.error.message).toContain("same idempotency key");
          const settled = await cut.post(`/v1/transactions/${id}/commit`, { idempotencyKey: key });
          if (mode === "after") {
            expect(settled.status).toBe(200);
            expect(settled.body).toMatchObject({ transactionId: id, outcome: "committed", replayed: true });
          } else {
            expect(settled.status).toBe(404);
            expect(settled.body.error).toMatchObject({ code: "TRANSACTION_NOT_FOUND" });
            expect(settled.body.error.message).toContain("did not commit");
          }
        }
        expect(await db.count(table)).toBe(1);
      });
    });
  });
}
