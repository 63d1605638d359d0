/**
 * Neon's SQL-over-HTTP door with the real, unmodified `@neondatabase/serverless` driver (its `neon()`
 * pointed at the gateway through the documented `neonConfig.fetchEndpoint`) and drizzle `neon-http`
 * on it, against the local PostgreSQL: queries, the `sql` template, batch transactions and their
 * options, errors with PostgreSQL's fields, every common type read exactly as `pg` reads it straight
 * from the database, the connection string's credentials, read-only principals, the consistency
 * token header and the metrics' route label.
 */
import { neon, neonConfig, NeonDbError } from "@neondatabase/serverless";
import { DrizzleQueryError, eq, sql as dsql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/neon-http";
import { drizzle as drizzleOnPg } from "drizzle-orm/node-postgres";
import { bigint, boolean, date, doublePrecision, integer, interval, json, jsonb, numeric, pgEnum, pgTable, real, serial, smallint, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

const TOKENS = { app: "app-token-0123456789abcdef0123456789", reader: "reader-token-0123456789abcdef01234567", ops: "ops-token-0123456789abcdef0123456789ab" };
const CLUSTER = "main";
const url = (user: string, token: string, cluster = CLUSTER): string => `postgresql://${user}:${token}@gateway.example/${cluster}`;

/** What the driver throws, with the fields it copies from the answer. */
async function failure(work: Promise<unknown>): Promise<NeonDbError> {
  const err: unknown = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NeonDbError);
  return err as NeonDbError;
}

describe("Neon's HTTP protocol with the real neon() driver", () => {
  let db: TestDatabase;
  let gateway: TestGateway;
  let tokens: TokensFile;
  const sql = () => neon(url("app", TOKENS.app));

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.admin.query("create table notes (id serial primary key, body text not null unique, n int)");
    await db.admin.query("create type mood as enum ('calm', 'busy')");
    tokens = writeTokensFile(TOKENS);
    gateway = await startTestGateway({
      clusters: { [CLUSTER]: { writerUrl: db.url }, other: { writerUrl: db.url } },
      defaultCluster: CLUSTER,
      auth: {
        bearer: { tokensFile: tokens.path },
        principals: { app: { clusters: { [CLUSTER]: "read-write", other: "read-write" } }, reader: { clusters: { [CLUSTER]: "read-only" } }, ops: { admin: true } },
      },
    });
    // The driver's documented option for a non-default endpoint: every neon() query goes here.
    neonConfig.fetchEndpoint = `${gateway.baseUrl}/sql`;
  });

  afterAll(async () => {
    await gateway?.stop();
    await db?.drop();
    tokens?.remove();
  });

  it("answers the sql template and sql.query with rows as objects", async () => {
    const query = sql();
    const n = 41;
    expect(await query`select ${n} + 1 as answer, ${"x"}::text as letter`).toEqual([{ answer: 42, letter: "x" }]);
    expect(await query.query("select $1::int * 2 as doubled", [21])).toEqual([{ doubled: 42 }]);
  });

  it("answers full results with fields carrying PostgreSQL's type OIDs, and array mode", async () => {
    const result = await sql().query("select 1::int4 as a, 'b'::varchar(5) as b", [], { fullResults: true, arrayMode: true });
    expect(result.command).toBe("SELECT");
    expect(result.rowCount).toBe(1);
    expect(result.rows).toEqual([[1, "b"]]);
    expect(result.fields.map((field) => [field.name, field.dataTypeID, field.dataTypeModifier])).toEqual([
      ["a", 23, -1],
      ["b", 1043, 9],
    ]);
  });

  it("writes, answers a write's command and count, and reads it back", async () => {
    const query = sql();
    const inserted = await query.query("insert into notes (body, n) values ($1, $2), ($3, $4)", ["w1", 1, "w2", 2], { fullResults: true });
    expect([inserted.command, inserted.rowCount, inserted.rows]).toEqual(["INSERT", 2, []]);
    expect(await query`select body, n from notes where body in ('w1', 'w2') order by n`).toEqual([
      { body: "w1", n: 1 },
      { body: "w2", n: 2 },
    ]);
  });

  it("runs a transaction as one unit: all of it, or none of it when a query fails", async () => {
    const query = sql();
    const [first, second] = await query.transaction([query`insert into notes (body) values ('t1') returning body`, query`select count(*)::int as c from notes where body = 't1'`]);
    expect(first).toEqual([{ body: "t1" }]);
    expect(second).toEqual([{ c: 1 }]);
    const err = await failure(query.transaction([query`insert into notes (body) values ('t2')`, query`insert into notes (body) values ('t1')`]));
    expect(err.code).toBe("23505");
    const { rows } = await db.admin.query("select count(*)::int as c from notes where body = 't2'");
    expect(rows[0].c).toBe(0);
  });

  it("honours the transaction's isolation level, read-only and deferrable options", async () => {
    const query = sql();
    const settings = await query.transaction(
      [query`show transaction_isolation`, query`show transaction_read_only`, query`show transaction_deferrable`],
      { isolationLevel: "Serializable", readOnly: true, deferrable: true },
    );
    expect(settings.map((rows) => rows[0])).toEqual([{ transaction_isolation: "serializable" }, { transaction_read_only: "on" }, { transaction_deferrable: "on" }]);
    const err = await failure(query.transaction([query`insert into notes (body) values ('ro')`], { readOnly: true }));
    expect(err.code).toBe("25006");
  });

  it("keeps PostgreSQL's error fields: code, detail, constraint, position", async () => {
    const query = sql();
    await query`insert into notes (body) values ('dup')`;
    const duplicate = await failure(query`insert into notes (body) values ('dup')`);
    expect(duplicate.code).toBe("23505");
    expect(duplicate.constraint).toBe("notes_body_key");
    expect(duplicate.detail).toBe("Key (body)=(dup) already exists.");
    expect(duplicate.severity).toBe("ERROR");
    const syntax = await failure(query.query("select 1 frm notes"));
    const direct: unknown = await db.admin.query("select 1 frm notes").catch((err: unknown) => err);
    expect(syntax.code).toBe("42601");
    expect(syntax.position).toBe((direct as { position: string }).position);
    expect(syntax.position).toBe("14");
    expect(syntax.message).toContain("syntax error");
  });

  it("reads every common type exactly as pg reads it straight from the database", async () => {
    const query = sql();
    const select = `select $1::int2 as i2, $2::int4 as i4, $3::int8 as i8, $4::numeric as num, $5::float8 as f8, $6::float4 as f4,
      $7::bool as b, $8::text as t, $9::bytea as bin, $10::json as j, $11::jsonb as jb, $12::timestamptz as tstz,
      $13::timestamp as ts, $14::date as d, $15::time as tm, $16::uuid as u, $17::int4[] as ia, $18::text[] as ta,
      $19::interval as iv, $20::mood as m, $21::mood[] as ma, $22::text as nul, $23::float8 as nan`;
    const params: unknown[] = [
      -32768, 2147483647, "9223372036854775807", "12345678901234567890.000000000123", 0.1 + 0.2, 3.25, true, "héllo \"wörld\" \\ ✓ 🐘",
      Buffer.from([0, 1, 2, 255]), { a: [1, 2.5, "x"], big: 1234567890123 }, { nested: { ok: true } }, new Date("2024-02-29T12:34:56.789Z"),
      "2024-02-29 12:34:56.123456", "2024-02-29", "23:59:59.999999", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", [1, null, 3], ["a", "b,c", "\"q\"", null],
      "1 year 2 mons 3 days 04:05:06", "busy", ["calm", "busy"], null, "NaN",
    ];
    const [viaGateway] = await query.query(select, params);
    const direct = (await db.admin.query(select, params)).rows[0];
    expect(viaGateway).toEqual(direct);
    expect(viaGateway).toMatchObject({ i8: "9223372036854775807", num: "12345678901234567890.000000000123", f8: 0.30000000000000004, bin: Buffer.from([0, 1, 2, 255]), ia: [1, null, 3], ma: "{calm,busy}" });
    expect(Number.isNaN(viaGateway?.nan)).toBe(true);
  });

  it("refuses a wrong token, a token under another principal's name, and a connection string without one", async () => {
    expect((await failure(neon(url("app", "not-a-token-0123456789abcdef01234"))`select 1`)).code).toBe("UNAUTHENTICATED");
    expect((await failure(neon(url("app", TOKENS.reader))`select 1`)).code).toBe("UNAUTHENTICATED");
    const answer = await fetch(`${gateway.baseUrl}/sql`, { method: "POST", body: JSON.stringify({ query: "select 1", params: [] }), headers: { "Neon-Connection-String": "postgresql://app@h/main" } });
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ code: "UNAUTHENTICATED" });
  });

  it("answers bad input in the driver's error shape, and keeps serving", async () => {
    const send = async (body: string, headers: Record<string, string> = {}) => {
      const answer = await fetch(`${gateway.baseUrl}/sql`, { method: "POST", body, headers: { "Neon-Connection-String": url("app", TOKENS.app), ...headers } });
      return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
    };
    expect(await send("{not json")).toMatchObject({ status: 400, body: { code: "MALFORMED_JSON" } });
    expect(await send(JSON.stringify({ sql: "select 1" }))).toMatchObject({ status: 400, body: { code: "INVALID_REQUEST" } });
    expect(await send(JSON.stringify({ queries: [] }))).toMatchObject({ status: 400, body: { code: "INVALID_REQUEST" } });
    expect(await send(JSON.stringify({ query: "select 1", params: [{ nested: true }] }))).toMatchObject({ status: 400, body: { code: "INVALID_REQUEST" } });
    expect(await send(JSON.stringify({ query: "select 1" }), { "Neon-Array-Mode": "yes" })).toMatchObject({ status: 400, body: { code: "INVALID_REQUEST" } });
    expect(await send(JSON.stringify({ queries: [{ query: "commit" }] }))).toMatchObject({ status: 400, body: { code: "INVALID_REQUEST" } });
    expect(await send(JSON.stringify({ query: "select 1 as one" }), { "content-type": "application/json" })).toMatchObject({ status: 200, body: { rows: [{ one: 1 }] } });
  });

  it("names the cluster by the connection string's database, and refuses an unknown one", async () => {
    expect(await neon(url("app", TOKENS.app, "other"))`select current_database() = ${db.name} as same`).toEqual([{ same: true }]);
    const unknown = await failure(neon(url("app", TOKENS.app, "nowhere"))`select 1`);
    expect(unknown.code).toBe("INVALID_REQUEST");
  });

  it("lets a read-only principal read and refuses its writes", async () => {
    const reader = neon(url("reader", TOKENS.reader));
    expect(await reader`select count(*)::int >= 0 as ok from notes`).toEqual([{ ok: true }]);
    const err = await failure(reader`insert into notes (body) values ('by reader')`);
    expect(err.code).toBe("FORBIDDEN");
    const { rows } = await db.admin.query("select count(*)::int as c from notes where body = 'by reader'");
    expect(rows[0].c).toBe(0);
  });

  it("answers a write's consistency token in a header the driver ignores, and accepts it back on a read", async () => {
    // A write refused in a READ ONLY batch first: the gateway asks the session's instance whether it
    // was demoted, on a session whose transaction has failed; that must not cost the cluster its tokens.
    const query = sql();
    expect((await failure(query.transaction([query`insert into notes (body) values ('ro-first')`], { readOnly: true }))).code).toBe("25006");
    const headers = { "Neon-Connection-String": url("app", TOKENS.app), "Neon-Raw-Text-Output": "true", "Neon-Array-Mode": "true" };
    const write = await fetch(`${gateway.baseUrl}/sql`, { method: "POST", body: JSON.stringify({ query: "insert into notes (body) values ($1)", params: ["tok"] }), headers });
    expect(write.status).toBe(200);
    const token = write.headers.get("x-poolgate-consistency-token");
    expect(token).toBeTruthy();
    const read = await fetch(`${gateway.baseUrl}/sql`, {
      method: "POST",
      body: JSON.stringify({ query: "select body from notes where body = $1", params: ["tok"] }),
      headers: { ...headers, "x-poolgate-consistency-token": token ?? "" },
    });
    expect(await read.json()).toMatchObject({ command: "SELECT", rowCount: 1, rows: [["tok"]], rowAsArray: true });
  });

  it("counts its requests under the /sql route in the metrics", async () => {
    await sql()`select 1`;
    const metrics = await fetch(`${gateway.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKENS.ops}` } });
    const text = await metrics.text();
    expect(text).toMatch(/poolgate_request_duration_seconds_count\{route="\/sql",cluster="main",intent="read",outcome="ok"\} [1-9]/);
  });

  describe("drizzle neon-http", () => {
    const notes = pgTable("notes", { id: serial("id").primaryKey(), body: text("body").notNull(), n: integer("n") });

    it("inserts, selects, updates and deletes", async () => {
      const orm = drizzle({ client: sql() });
      const [row] = await orm.insert(notes).values({ body: "orm1", n: 7 }).returning();
      expect(row).toMatchObject({ body: "orm1", n: 7 });
      await orm.update(notes).set({ n: 8 }).where(eq(notes.body, "orm1"));
      expect(await orm.select({ body: notes.body, n: notes.n }).from(notes).where(eq(notes.body, "orm1"))).toEqual([{ body: "orm1", n: 8 }]);
      await orm.delete(notes).where(eq(notes.body, "orm1"));
      expect(await orm.select().from(notes).where(eq(notes.body, "orm1"))).toEqual([]);
      const executed = await orm.execute(dsql`select ${"v"}::text as v`);
      expect(executed.rows).toEqual([{ v: "v" }]);
    });

    it("round-trips drizzle's column types exactly as drizzle on node-postgres reads them straight from the database", async () => {
      await db.admin.query(`create table kinds (id serial primary key, big int8, num numeric(40,20), flag bool, at timestamptz(3), local timestamp(6),
        day date, doc jsonb, plain json, u uuid, ints int4[], texts text[], span interval, r real, dp float8, m mood, small int2)`);
      const mood = pgEnum("mood", ["calm", "busy"]);
      const kinds = pgTable("kinds", {
        id: serial("id").primaryKey(),
        big: bigint("big", { mode: "bigint" }),
        num: numeric("num"),
        flag: boolean("flag"),
        at: timestamp("at", { withTimezone: true, precision: 3 }),
        local: timestamp("local", { precision: 6, mode: "string" }),
        day: date("day", { mode: "date" }),
        doc: jsonb("doc"),
        plain: json("plain"),
        u: uuid("u"),
        ints: integer("ints").array(),
        texts: text("texts").array(),
        span: interval("span"),
        r: real("r"),
        dp: doublePrecision("dp"),
        m: mood("m"),
        small: smallint("small"),
      });
      const full = {
        big: 9223372036854775807n,
        num: "12345678901234567890.00000000000000000123",
        flag: true,
        at: new Date("2024-02-29T12:34:56.789Z"),
        local: "2024-02-29 12:34:56.123456",
        day: new Date("1969-07-20T00:00:00.000Z"),
        doc: { a: [1, 2.5, "x"], s: "ü \"q\"", big: 1234567890123 },
        plain: { k: null },
        u: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        ints: [1, -2, 2147483647],
        texts: ["a", "b,c", "\"q\"", "NULL", "héllo ✓"],
        span: "1 year 2 mons 3 days 04:05:06",
        r: 3.25,
        dp: 0.1 + 0.2,
        m: "busy" as const,
        small: -32768,
      };
      const orm = drizzle({ client: sql() });
      await orm.insert(kinds).values([full, {}]);
      const viaGateway = await orm.select().from(kinds).orderBy(kinds.id);
      const direct = await drizzleOnPg({ client: db.admin }).select().from(kinds).orderBy(kinds.id);
      expect(viaGateway).toEqual(direct);
      expect(viaGateway[0]).toEqual({ id: 1, ...full });
      expect(Object.entries(viaGateway[1] ?? {}).filter(([, value]) => value !== null)).toEqual([["id", 2]]);
    });

    it("hands the driver's error on with PostgreSQL's fields as the cause of drizzle's", async () => {
      const orm = drizzle({ client: sql() });
      await orm.insert(notes).values({ body: "orm-dup" });
      const err: unknown = await orm
        .insert(notes)
        .values({ body: "orm-dup" })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(DrizzleQueryError);
      expect((err as DrizzleQueryError).cause).toBeInstanceOf(NeonDbError);
      expect((err as DrizzleQueryError).cause).toMatchObject({ code: "23505", constraint: "notes_body_key", detail: "Key (body)=(orm-dup) already exists." });
    });

    it("runs db.batch as one transaction", async () => {
      const orm = drizzle({ client: sql() });
      const [inserted, counted] = await orm.batch([
        orm.insert(notes).values({ body: "orm-batch" }).returning({ body: notes.body }),
        orm.select({ c: dsql<number>`count(*)::int` }).from(notes).where(eq(notes.body, "orm-batch")),
      ]);
      expect(inserted).toEqual([{ body: "orm-batch" }]);
      expect(counted).toEqual([{ c: 1 }]);
      await expect(orm.batch([orm.insert(notes).values({ body: "orm-batch-2" }), orm.insert(notes).values({ body: "orm-batch" })])).rejects.toThrow();
      expect(await orm.select().from(notes).where(eq(notes.body, "orm-batch-2"))).toEqual([]);
    });
  });
});
