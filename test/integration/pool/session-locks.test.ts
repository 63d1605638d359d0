/**
 * No session-level lock (PostgreSQL advisory locks, MySQL/MariaDB GET_LOCK) outlives the request that
 * took it, however it was taken: through a view, a rule, a trigger, a column default or a function
 * that says it is STABLE, none of which the SQL reader can see. With the production logins (a
 * read-only login for the read-only principal), on both surfaces. After each request the database is
 * asked directly whether the lock is still held, while the gateway's one pooled session sits idle.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase } from "../../support/mysql.js";
import { createTestDatabase } from "../../support/postgres.js";
import { createMysqlLogins, createPostgresLogins, type Login } from "../../support/database-logins.js";
import { waitFor } from "../../support/wait-for.js";

const TOKENS = { reader: "locks-reader-token-0123456789abcdef0", writer: "locks-writer-token-0123456789abcdef0" };
const ARNS = { resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:app", secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:app" };

type Surface = "query" | "transaction" | "data-api";

interface HiddenLock {
  how: string;
  principal: "reader" | "writer";
  sql: string;
}

interface Environment {
  url: string;
  /** The documented grant script's read-only login (docs/security-and-logins.md). */
  login: Login;
  /** The session-level locks any session holds in the test database. */
  locksHeld(): Promise<string[]>;
  cleanup(): Promise<void>;
}

interface Target {
  name: string;
  hidden: HiddenLock[];
  setup(): Promise<Environment>;
}

const POSTGRES: Target = {
  name: "PostgreSQL",
  hidden: [
    { how: "a view", principal: "reader", sql: "select * from locking_view" },
    { how: "a STABLE SECURITY DEFINER function", principal: "reader", sql: "select calm_looking()" },
    { how: "a view read by a read-write principal", principal: "writer", sql: "select * from locking_view" },
    { how: "a rule", principal: "writer", sql: "insert into ruled (id) values (1)" },
    { how: "a trigger", principal: "writer", sql: "insert into triggered (id) values (1)" },
    { how: "a column default", principal: "writer", sql: "insert into defaulted (id) values (1)" },
  ],
  async setup() {
    const db = await createTestDatabase();
    for (const sql of [
      "create view locking_view as select 1 as x from (select pg_advisory_lock(101)) l",
      "create table ruled (id int)",
      "create rule lock_on_insert as on insert to ruled do also select pg_advisory_lock(102)",
      "create table triggered (id int)",
      "create function lock_in_trigger() returns trigger language plpgsql as $$ begin perform pg_advisory_lock(103); return new; end $$",
      "create trigger lock_before_insert before insert on triggered for each row execute function lock_in_trigger()",
      "create table defaulted (id int, taken text default pg_advisory_lock(104)::text)",
      "create function calm_looking() returns int stable security definer language plpgsql as $$ begin perform pg_advisory_lock(105); return 1; end $$",
    ]) {
      await db.admin.query(sql);
    }
    const logins = await createPostgresLogins(db);
    // The grant script takes EXECUTE from PUBLIC and says to grant back functions that only read: an
    // operator who believes this one does grants it.
    await db.admin.query(`grant execute on function calm_looking() to ${logins.readOnly.username}`);
    return {
      url: db.url,
      login: logins.readOnly,
      locksHeld: async () =>
        (
          await db.admin.query<{ lock: string }>(
            "select objid::text as lock from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database()) order by 1",
          )
        ).rows.map((row) => row.lock),
      cleanup: () => logins.drop(),
    };
  },
};

const MYSQL: Target = {
  name: "MariaDB",
  hidden: [
    { how: "a view", principal: "reader", sql: "select * from locking_view" },
    { how: "a view read by a read-write principal", principal: "writer", sql: "select * from locking_view" },
    { how: "a view over a stored function", principal: "reader", sql: "select * from function_view" },
    { how: "a stored function", principal: "writer", sql: "select calm_looking() as x" },
    { how: "a trigger", principal: "writer", sql: "insert into triggered (id) values (1)" },
  ],
  async setup() {
    const db = await createTestMysqlDatabase();
    for (const sql of [
      "create view locking_view as select get_lock('view_lock', 0) as l",
      "create function calm_looking() returns int deterministic reads sql data return get_lock('function_lock', 0)",
      "create view function_view as select calm_looking() as l",
      "create table triggered (id int)",
      "create trigger lock_before_insert before insert on triggered for each row set @taken = get_lock('trigger_lock', 0)",
    ]) {
      await db.query(sql);
    }
    const logins = await createMysqlLogins(db);
    const names = ["view_lock", "function_lock", "trigger_lock"];
    return {
      url: db.url,
      login: logins.readOnly,
      locksHeld: async () => {
        const held: string[] = [];
        for (const name of names) {
          const [row] = await db.query<{ owner: number | null }>("select is_used_lock(?) as owner", [name]);
          if (row?.owner !== null && row?.owner !== undefined) held.push(name);
        }
        return held;
      },
      cleanup: () => logins.drop(),
    };
  },
};

async function run(gateway: TestGateway, surface: Surface, sql: string, token: string): Promise<number> {
  const as = bearer(token);
  switch (surface) {
    case "query":
      return (await gateway.post("/v1/query", { sql }, as)).status;
    case "transaction": {
      const id = (await gateway.post("/v1/transactions", {}, as)).body.transactionId as string;
      const status = (await gateway.post("/v1/query", { sql, transactionId: id }, as)).status;
      await gateway.post(`/v1/transactions/${id}/rollback`, undefined, as);
      return status;
    }
    case "data-api":
      return (await gateway.post("/Execute", { ...ARNS, sql }, as)).status;
  }
}

for (const target of [POSTGRES, MYSQL]) {
  describe(`session-level locks on ${target.name}`, () => {
    let gateway: TestGateway;
    let env: Environment;
    let tokens: TokensFile;

    beforeAll(async () => {
      env = await target.setup();
      tokens = writeTokensFile(TOKENS);
      gateway = await startTestGateway({
        clusters: { default: { writerUrl: env.url, logins: { readOnly: { source: "password", username: env.login.username, password: env.login.password } } } },
        // One session per login: every request finds the session the one before it used.
        pool: { maxSize: 1 },
        auth: { bearer: { tokensFile: tokens.path }, principals: { reader: { clusters: { default: "read-only" } }, writer: { clusters: { default: "read-write" } } } },
      });
    });

    afterAll(async () => {
      await gateway?.stop();
      await env?.cleanup();
      tokens?.remove();
    });

    for (const hidden of target.hidden) {
      it(`releases a lock taken through ${hidden.how} once the request is over, on every surface`, async () => {
        for (const surface of ["query", "transaction", "data-api"] as const) {
          expect(await run(gateway, surface, hidden.sql, TOKENS[hidden.principal]), surface).toBe(200);
          // The session goes back to its pool after the answer: the lock must be gone by the time it is idle.
          await waitFor(async () => (await env.locksHeld()).length === 0, 5000).catch(() => undefined);
          expect(await env.locksHeld(), `${hidden.how} via ${surface}`).toEqual([]);
        }
      });
    }
  });
}
