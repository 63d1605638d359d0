/**
 * The database logins of docs/security-and-logins.md, made by running its grant scripts (schemas/grants/<engine>.sql), hold
 * what that page promises: a read-only principal cannot run the owner's SECURITY DEFINER functions
 * (PostgreSQL lets PUBLIC execute every function unless the script takes it away) nor read the
 * idempotency records; a least-privilege read-write login records idempotent writes with the default
 * settings (the script made the table, the gateway finds it instead of trying to create it); and a
 * gateway whose read-write login cannot use or create the table refuses to start, naming the grant.
 */
import mysql from "mysql2/promise";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { createMysqlLogins, createPostgresLogins, type DatabaseLogins, type Login } from "../../support/database-logins.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase, type TestMysqlDatabase } from "../../support/mysql.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

const TOKENS = { reader: "logins-reader-token-0123456789abcdef", writer: "logins-writer-token-0123456789abcdef" };
const reader = bearer(TOKENS.reader);
const writer = bearer(TOKENS.writer);

/** The cluster's URL with a login of the script in place of the admin user. */
function urlAs(url: string, login: Login): string {
  const as = new URL(url);
  as.username = login.username;
  as.password = login.password;
  return as.toString();
}

function gatewayConfig(url: string, logins: DatabaseLogins, tokens: TokensFile) {
  return {
    clusters: { default: { writerUrl: urlAs(url, logins.readWrite), logins: { readOnly: { source: "password" as const, ...logins.readOnly } } } },
    pool: { maxSize: 2 },
    // The default table, in the test's own copy of the script's database (a server's, shared by every test).
    idempotency: { table: logins.idempotencyTable },
    auth: { bearer: { tokensFile: tokens.path }, principals: { reader: { clusters: { default: "read-only" as const } }, writer: { clusters: { default: "read-write" as const } } } },
  };
}

describe("the documented PostgreSQL logins (schemas/grants/postgres.sql)", () => {
  let db: TestDatabase;
  let logins: DatabaseLogins;
  let tokens: TokensFile;
  let gateway: TestGateway;
  // The owner's function that took a ROW EXCLUSIVE lock inside a read-only transaction.
  const definer = (name: string) =>
    `create function ${name}() returns int language plpgsql security definer as $$ begin lock table ledger in row exclusive mode; return 1; end $$`;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.admin.query("create table ledger (id serial primary key, note text)");
    await db.admin.query(definer("lock_before_grants"));
    logins = await createPostgresLogins(db);
    await db.admin.query(definer("lock_after_grants"));
    tokens = writeTokensFile(TOKENS);
    gateway = await startTestGateway(gatewayConfig(db.url, logins, tokens));
  });

  afterAll(async () => {
    await gateway?.stop();
    await logins?.drop();
    tokens?.remove();
  });

  it("keeps the owner's SECURITY DEFINER functions from a read-only principal, those created before the grants and after", async () => {
    for (const name of ["lock_before_grants", "lock_after_grants"]) {
      const refused = await gateway.post("/v1/query", { sql: `select ${name}() as locked` }, reader);
      expect(refused.status, name).toBe(403);
      expect(refused.body.error.database?.sqlstate, name).toBe("42501");
      // Granted back to the read-write login.
      expect((await gateway.post("/v1/query", { sql: `select ${name}() as locked` }, writer)).body.rows, name).toEqual([{ locked: 1 }]);
    }
  });

  it("records a keyed write with the default settings on the least-privilege read-write login", async () => {
    const write = { sql: "insert into ledger (note) values ('once') returning id", idempotencyKey: "logins-once" };
    const first = await gateway.post("/v1/query", write, writer);
    expect(first.status).toBe(200);
    expect((await gateway.post("/v1/query", write, writer)).body).toMatchObject({ replayed: true, rowCount: 1, rows: first.body.rows });
    expect((await db.admin.query("select count(*)::int as n from ledger where note = 'once'")).rows).toEqual([{ n: 1 }]);
  });

  it("lets no login but the read-write one read the idempotency records", async () => {
    const read = "select count(*)::int as n from poolgate.idempotency_keys";
    expect((await gateway.post("/v1/query", { sql: read }, reader)).status).toBe(403);
    const direct = async (login: Login) => {
      const client = new pg.Client({ connectionString: urlAs(db.url, login) });
      await client.connect();
      try {
        return await client.query(read).then(
          ({ rows }) => rows,
          (err: { code?: string }) => err.code,
        );
      } finally {
        await client.end();
      }
    };
    expect(await direct(logins.readOnly)).toBe("42501");
    expect(await direct(logins.readWrite)).toEqual([{ n: 1 }]);
  });

  it("refuses to start when the read-write login cannot use the idempotency table, naming the grant", async () => {
    await db.admin.query(`revoke usage on schema poolgate from ${logins.readWrite.username}`);
    try {
      await expect(startTestGateway(gatewayConfig(db.url, logins, tokens))).rejects.toMatchObject({
        code: "IDEMPOTENCY_UNAVAILABLE",
        message: expect.stringContaining(`GRANT USAGE ON SCHEMA "poolgate" TO ${logins.readWrite.username}`),
      });
    } finally {
      await db.admin.query(`grant usage on schema poolgate to ${logins.readWrite.username}`);
    }
    await db.admin.query("drop table poolgate.idempotency_keys");
    await expect(startTestGateway(gatewayConfig(db.url, logins, tokens))).rejects.toMatchObject({
      code: "IDEMPOTENCY_UNAVAILABLE",
      message: expect.stringMatching(/missing and the read-write login may not create it.*schemas\/grants\/postgres\.sql/),
    });
  });
});

describe("the documented MySQL logins (schemas/grants/mysql.sql)", () => {
  let db: TestMysqlDatabase;
  let logins: DatabaseLogins;
  let tokens: TokensFile;
  let gateway: TestGateway;

  beforeAll(async () => {
    db = await createTestMysqlDatabase();
    await db.query("create table ledger (id int auto_increment primary key, note text)");
    logins = await createMysqlLogins(db);
    tokens = writeTokensFile(TOKENS);
    gateway = await startTestGateway(gatewayConfig(db.url, logins, tokens));
  });

  afterAll(async () => {
    await gateway?.stop();
    await logins?.drop();
    tokens?.remove();
  });

  it("records a keyed write with the default settings on the least-privilege read-write login", async () => {
    const write = { sql: "insert into ledger (note) values ('once')", idempotencyKey: "logins-once" };
    const first = await gateway.post("/v1/query", write, writer);
    expect(first.status).toBe(200);
    expect((await gateway.post("/v1/query", write, writer)).body).toMatchObject({ replayed: true, rowCount: 1, rows: first.body.rows });
    expect(await db.query("select count(*) as n from ledger where note = 'once'")).toEqual([{ n: 1 }]);
  });

  it("lets no login but the read-write one read the idempotency records", async () => {
    const table = gateway.gateway.clusters.get("default")?.idempotency.table ?? "";
    const read = `select count(*) as n from ${table}`;
    expect((await gateway.post("/v1/query", { sql: read }, reader)).status).toBe(403);
    const direct = async (login: Login) => {
      const connection = await mysql.createConnection(urlAs(db.url, login));
      try {
        return await connection.query<mysql.RowDataPacket[]>(read).then(
          ([rows]) => rows.map((row) => ({ n: Number(row.n) })),
          (err: { errno?: number }) => err.errno,
        );
      } finally {
        await connection.end();
      }
    };
    // ER_TABLEACCESS_DENIED_ERROR: the read-only login has no grant where the records are.
    expect(await direct(logins.readOnly)).toBe(1142);
    expect(await direct(logins.readWrite)).toEqual([{ n: 1 }]);
  });

  it("refuses to start when the idempotency table is missing and the read-write login may not create it, naming the grant script", async () => {
    await db.query(`drop table ${gateway.gateway.clusters.get("default")?.idempotency.table ?? ""}`);
    await expect(startTestGateway(gatewayConfig(db.url, logins, tokens))).rejects.toMatchObject({
      code: "IDEMPOTENCY_UNAVAILABLE",
      message: expect.stringMatching(/missing and the read-write login may not create it.*schemas\/grants\/mysql\.sql/),
    });
  });

  it("lets the read-only login kill nothing but its own sessions (no PROCESS or SUPER)", async () => {
    const connection = await mysql.createConnection(urlAs(db.url, logins.readOnly));
    try {
      const [rows] = await connection.query<mysql.RowDataPacket[]>("show grants");
      expect(rows.map((row) => String(Object.values(row)[0])).join("\n")).not.toMatch(/PROCESS|SUPER|CONNECTION_ADMIN|ALL PRIVILEGES/);
    } finally {
      await connection.end();
    }
  });
});
