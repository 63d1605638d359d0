/**
 * `kysely-neon` 2.0.2, unmodified, on the real `neon()` driver pointed at the gateway's `/sql` door,
 * against the local PostgreSQL: CRUD, the schema builder and introspection, `sql` templates, types
 * (compile time and every common value read exactly as `pg` reads it straight from the database),
 * transactions as the dialect offers them over HTTP, and PostgreSQL's errors.
 *
 * kysely-neon needs `kysely` ^0.28 as its peer while the repository's `kysely` is 0.27 (kysely-data-api's
 * peer). This folder is a package of its own (package.json beside this file, a `file:` devDependency of
 * the repository), so `npm ci` installs kysely 0.28.19 and kysely-neon into this folder's node_modules:
 * `kysely` and `kysely-neon` below resolve there, everything else from the repository, with no download
 * at test time and no ERESOLVE.
 */
import { readFileSync } from "node:fs";
import { neon, neonConfig, NeonDbError } from "@neondatabase/serverless";
import { type ColumnType, CompiledQuery, type Generated, Kysely, PostgresAdapter, sql } from "kysely";
import { NeonDialect } from "kysely-neon";
import semver from "semver";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { type TokensFile, writeTokensFile } from "../../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../../support/postgres.js";

const TOKENS = { app: "app-token-0123456789abcdef0123456789", reader: "reader-token-0123456789abcdef01234567" };
const CLUSTER = "main";
const url = (user: string, token: string): string => `postgresql://${user}:${token}@gateway.example/${CLUSTER}`;

interface Database {
  notes: { id: Generated<number>; body: string; n: number | null; created: ColumnType<Date, Date | string | undefined, never> };
}

/** What a promise rejected with (failing the test if it resolved). */
async function rejection(work: Promise<unknown>): Promise<unknown> {
  const outcome: unknown = await work.then(
    () => new Error("expected a rejection"),
    (err: unknown) => ({ rejected: err }),
  );
  expect(outcome).toHaveProperty("rejected");
  return (outcome as { rejected: unknown }).rejected;
}

describe("kysely-neon with the real neon() driver against the gateway", () => {
  let db: TestDatabase;
  let gateway: TestGateway;
  let tokens: TokensFile;
  let orm: Kysely<Database>;

  beforeAll(async () => {
    db = await createTestDatabase();
    tokens = writeTokensFile(TOKENS);
    gateway = await startTestGateway({
      clusters: { [CLUSTER]: { writerUrl: db.url } },
      defaultCluster: CLUSTER,
      auth: { bearer: { tokensFile: tokens.path }, principals: { app: { clusters: { [CLUSTER]: "read-write" } }, reader: { clusters: { [CLUSTER]: "read-only" } } } },
    });
    // The driver's documented option for a non-default endpoint: the one changed line.
    neonConfig.fetchEndpoint = `${gateway.baseUrl}/sql`;
    orm = new Kysely<Database>({ dialect: new NeonDialect({ neon: neon(url("app", TOKENS.app)) }) });
  });

  afterAll(async () => {
    await orm?.destroy();
    await gateway?.stop();
    await db?.drop();
    tokens?.remove();
  });

  it("runs on the kysely its peer range asks for, not the repository's", () => {
    const version = (folder: string) => (JSON.parse(readFileSync(new URL(`./node_modules/${folder}/package.json`, import.meta.url), "utf8")) as { version: string; peerDependencies?: Record<string, string> });
    const kyselyNeon = version("kysely-neon");
    expect(kyselyNeon.version).toBe("2.0.2");
    expect(semver.satisfies(version("kysely").version, kyselyNeon.peerDependencies?.kysely ?? "")).toBe(true);
    // This file's kysely is the very copy kysely-neon extends (one module instance, so that version).
    expect(new NeonDialect({ neon: neon(url("app", TOKENS.app)) }).createAdapter()).toBeInstanceOf(PostgresAdapter);
  });

  it("creates a table with the schema builder and finds it by introspection", async () => {
    await orm.schema
      .createTable("notes")
      .addColumn("id", "serial", (column) => column.primaryKey())
      .addColumn("body", "text", (column) => column.notNull().unique())
      .addColumn("n", "integer")
      .addColumn("created", "timestamptz", (column) => column.notNull().defaultTo(sql`now()`))
      .execute();
    const tables = await orm.introspection.getTables();
    const notes = tables.find((table) => table.name === "notes");
    expect(notes?.columns.map((column) => [column.name, column.dataType, column.isNullable, column.hasDefaultValue])).toEqual([
      ["id", "int4", false, true],
      ["body", "text", false, false],
      ["n", "int4", true, false],
      ["created", "timestamptz", false, true],
    ]);
  });

  it("inserts, selects, updates and deletes, with the affected row counts", async () => {
    const created = new Date("2024-02-29T12:34:56.789Z");
    const inserted = await orm
      .insertInto("notes")
      .values([
        { body: "k1", n: 1, created },
        { body: "k2", n: 2 },
      ])
      .returning(["id", "body", "created"])
      .execute();
    expect(inserted.map((row) => row.body)).toEqual(["k1", "k2"]);
    expect(inserted[0]?.created).toEqual(created);
    expectTypeOf(inserted[0]).toEqualTypeOf<{ id: number; body: string; created: Date } | undefined>();

    const updated = await orm.updateTable("notes").set((eb) => ({ n: eb("n", "+", 10) })).where("body", "in", ["k1", "k2"]).executeTakeFirstOrThrow();
    expect(updated.numUpdatedRows).toBe(2n);
    const read = await orm.selectFrom("notes").select(["body", "n"]).where("body", "like", "k%").orderBy("n").execute();
    expect(read).toEqual([
      { body: "k1", n: 11 },
      { body: "k2", n: 12 },
    ]);
    expectTypeOf(read).toEqualTypeOf<{ body: string; n: number | null }[]>();
    // @ts-expect-error kysely 0.28's types know the table's columns
    orm.selectFrom("notes").select("no_such_column");

    const deleted = await orm.deleteFrom("notes").where("body", "=", "k2").executeTakeFirstOrThrow();
    expect(deleted.numDeletedRows).toBe(1n);
    const { rows } = await db.admin.query("select body, n from notes order by id");
    expect(rows).toEqual([{ body: "k1", n: 11 }]);
  });

  it("runs raw sql templates with parameters", async () => {
    const result = await sql<{ answer: number; letter: string }>`select ${41}::int + 1 as answer, ${"x"}::text as letter`.execute(orm);
    expect(result.rows).toEqual([{ answer: 42, letter: "x" }]);
  });

  it("reads every common type exactly as pg reads it straight from the database", async () => {
    const select = `select $1::int8 as i8, $2::numeric as num, $3::float8 as f8, $4::bool as b, $5::text as t,
      $6::bytea as bin, $7::jsonb as jb, $8::timestamptz as tstz, $9::date as d, $10::uuid as u, $11::int4[] as ia,
      $12::text[] as ta, $13::interval as iv, $14::text as nul`;
    const params = [
      "9223372036854775807", "12345678901234567890.000000000123", 0.1 + 0.2, true, "héllo \"wörld\" \\ ✓ 🐘", Buffer.from([0, 1, 2, 255]),
      JSON.stringify({ a: [1, 2.5, "x"], big: 1234567890123 }), new Date("2024-02-29T12:34:56.789Z"), "2024-02-29",
      "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", [1, null, 3], ["a", "b,c", "\"q\"", null], "1 year 2 mons 3 days 04:05:06", null,
    ];
    const viaGateway = await orm.executeQuery(CompiledQuery.raw(select, params));
    const direct = await db.admin.query(select, params);
    expect(viaGateway.rows).toEqual(direct.rows);
    expect(viaGateway.rows[0]).toMatchObject({ i8: "9223372036854775807", num: "12345678901234567890.000000000123", bin: Buffer.from([0, 1, 2, 255]), ia: [1, null, 3], jb: { a: [1, 2.5, "x"], big: 1234567890123 } });
  });

  it("refuses kysely's interactive transaction in the dialect itself, before any request", async () => {
    const before = (await db.admin.query("select count(*)::int as c from notes")).rows[0].c as number;
    const err = await rejection(orm.transaction().execute(async (tx) => tx.insertInto("notes").values({ body: "never" }).execute()));
    expect((err as Error).message).toMatch(/doesn't support interactive transactions/);
    expect((await db.admin.query("select count(*)::int as c from notes")).rows[0].c).toBe(before);
  });

  it("runs kysely-built queries as one all-or-nothing transaction through the driver's sql.transaction", async () => {
    const client = neon(url("app", TOKENS.app));
    const compiled = (query: { compile(): { sql: string; parameters: readonly unknown[] } }) => {
      const { sql: text, parameters } = query.compile();
      return client.query(text, [...parameters]);
    };
    const [inserted, counted] = await client.transaction([
      compiled(orm.insertInto("notes").values({ body: "tx1" }).returning("body")),
      compiled(orm.selectFrom("notes").select((eb) => eb.fn.countAll<number>().as("c")).where("body", "=", "tx1")),
    ]);
    expect(inserted).toEqual([{ body: "tx1" }]);
    expect(counted).toEqual([{ c: "1" }]);
    const err = await rejection(client.transaction([compiled(orm.insertInto("notes").values({ body: "tx2" })), compiled(orm.insertInto("notes").values({ body: "tx1" }))]));
    expect(err).toBeInstanceOf(NeonDbError);
    expect((err as NeonDbError).code).toBe("23505");
    expect((await db.admin.query("select count(*)::int as c from notes where body = 'tx2'")).rows[0].c).toBe(0);
  });

  it("hands PostgreSQL's errors through with their fields", async () => {
    await orm.insertInto("notes").values({ body: "dup" }).execute();
    const duplicate = await rejection(orm.insertInto("notes").values({ body: "dup" }).execute());
    expect(duplicate).toBeInstanceOf(NeonDbError);
    expect(duplicate).toMatchObject({ code: "23505", constraint: "notes_body_key", detail: "Key (body)=(dup) already exists.", severity: "ERROR" });
    const missing = await rejection(sql`select 1 from no_such_table`.execute(orm));
    expect(missing).toMatchObject({ code: "42P01", position: "15" });
  });

  it("lets a read-only principal read and refuses its writes", async () => {
    const reader = new Kysely<Database>({ dialect: new NeonDialect({ neon: neon(url("reader", TOKENS.reader)) }) });
    expect(await reader.selectFrom("notes").select("body").where("body", "=", "dup").execute()).toEqual([{ body: "dup" }]);
    const refused = await rejection(reader.insertInto("notes").values({ body: "by reader" }).execute());
    expect(refused).toMatchObject({ code: "FORBIDDEN" });
    expect((await db.admin.query("select count(*)::int as c from notes where body = 'by reader'")).rows[0].c).toBe(0);
    await reader.destroy();
  });
});
