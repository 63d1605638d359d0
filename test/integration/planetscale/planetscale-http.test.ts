/**
 * PlanetScale's HTTP protocol with the real, unmodified `@planetscale/database` driver (its `url`
 * pointed at the gateway, the one changed line) and drizzle `planetscale-serverless` on it, against
 * the local MariaDB: CRUD, transactions committed and rolled back, every common type compared with
 * the bytes MariaDB's own text protocol sends (read straight from the server and put through the
 * driver's own `cast`), errors with MySQL's error number and SQLSTATE, the Basic credentials, a
 * read-only principal, the consistency token, an idempotency key and the metrics' route label.
 */
import { cast, Client, connect, DatabaseError, type Field } from "@planetscale/database";
import { DrizzleQueryError, eq } from "drizzle-orm";
import { bigint, binary, boolean, char, date, datetime, decimal, double, float, int, json, mediumint, mysqlEnum, mysqlTable, smallint, text, time, timestamp, tinyint, varbinary, varchar, year } from "drizzle-orm/mysql-core";
import { drizzle as drizzleOnMysql2 } from "drizzle-orm/mysql2";
import { drizzle } from "drizzle-orm/planetscale-serverless";
import mysql from "mysql2/promise";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase, type TestMysqlDatabase } from "../../support/mysql.js";

const TOKENS = { app: "app-token-0123456789abcdef0123456789", reader: "reader-token-0123456789abcdef01234567", ops: "ops-token-0123456789abcdef0123456789ab" };
const CLUSTER = "main";
const EXECUTE = "/psdb.v1alpha1.Database/Execute";

/** What the driver throws. */
async function failure(work: Promise<unknown>): Promise<DatabaseError> {
  const err: unknown = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DatabaseError);
  return err as DatabaseError;
}

/** Each common type: its column, a value as SQL, and the Vitess type PlanetScale reports for it. */
const TYPES: [name: string, column: string, literal: string, vitess: string][] = [
  ["ti", "TINYINT", "-128", "INT8"],
  ["tu", "TINYINT UNSIGNED", "255", "UINT8"],
  ["si", "SMALLINT", "-32768", "INT16"],
  ["mi", "MEDIUMINT", "8388607", "INT24"],
  ["i", "INT", "-2147483648", "INT32"],
  ["iu", "INT UNSIGNED", "4294967295", "UINT32"],
  ["bmin", "BIGINT", "-9223372036854775808", "INT64"],
  ["bmax", "BIGINT", "9223372036854775807", "INT64"],
  ["bu", "BIGINT UNSIGNED", "18446744073709551615", "UINT64"],
  ["d", "DECIMAL(40,20)", "-12345678901234567890.12345678901234567890", "DECIMAL"],
  ["f", "FLOAT", "3.14159", "FLOAT32"],
  ["db", "DOUBLE", "1.7976931348623157e308", "FLOAT64"],
  ["dt", "DATE", "'1969-07-20'", "DATE"],
  ["dtm", "DATETIME(6)", "'2024-02-29 13:14:15.123456'", "DATETIME"],
  ["dt0", "DATETIME(3)", "'2024-02-29 13:14:15'", "DATETIME"],
  ["ts", "TIMESTAMP(3) NULL", "'2038-01-19 03:14:07.999'", "TIMESTAMP"],
  ["tm", "TIME(2)", "'-838:59:59.00'", "TIME"],
  ["y", "YEAR", "2155", "YEAR"],
  ["c", "CHAR(4)", "'ab'", "CHAR"],
  ["vc", "VARCHAR(40)", "'héllo wörld ☃ 😀'", "VARCHAR"],
  ["tx", "TEXT", "'line one\\nline \"two\"'", "TEXT"],
  ["bn", "BINARY(4)", "x'00ff7f80'", "BINARY"],
  ["vb", "VARBINARY(8)", "x'deadbeef00'", "VARBINARY"],
  ["bl", "BLOB", "x'000102fdfeff'", "BLOB"],
  ["js", "JSON", "'{\"big\": 12345678901234567890123, \"s\": \"ü\", \"a\": [1, null]}'", "JSON"],
  ["en", "ENUM('calm','busy')", "'busy'", "ENUM"],
  ["st", "SET('a','b','c')", "'a,c'", "SET"],
  ["bt", "BIT(3)", "b'101'", "BIT"],
  ["nl", "INT NULL", "NULL", "INT32"],
];

describe("PlanetScale's HTTP protocol with the real @planetscale/database driver", () => {
  let db: TestMysqlDatabase;
  let gateway: TestGateway;
  let tokens: TokensFile;
  const url = (user: string, token: string, cluster = CLUSTER): string => `${gateway.baseUrl.replace("//", `//${user}%40${cluster}:${token}@`)}`;
  const app = () => connect({ url: url("app", TOKENS.app) });

  beforeAll(async () => {
    db = await createTestMysqlDatabase();
    await db.query("CREATE TABLE notes (id BIGINT AUTO_INCREMENT PRIMARY KEY, body VARCHAR(100) NOT NULL UNIQUE, n INT)");
    tokens = writeTokensFile(TOKENS);
    gateway = await startTestGateway({
      clusters: { [CLUSTER]: { writerUrl: db.url } },
      defaultCluster: CLUSTER,
      auth: {
        bearer: { tokensFile: tokens.path },
        principals: { app: { clusters: { [CLUSTER]: "read-write" } }, reader: { clusters: { [CLUSTER]: "read-only" } }, ops: { admin: true } },
      },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await db?.drop();
    tokens?.remove();
  });

  it("creates, reads, updates and deletes, with insertId and rowsAffected", async () => {
    const conn = app();
    // The driver's CreateSession: a session with nothing open, carried by the next requests.
    await conn.refresh();
    const inserted = await conn.execute("INSERT INTO notes (body, n) VALUES (?, ?)", ["first", 1]);
    expect(inserted.rowsAffected).toBe(1);
    expect(Number(inserted.insertId)).toBeGreaterThan(0);
    const read = await conn.execute("SELECT id, body, n FROM notes WHERE id = ?", [inserted.insertId]);
    expect(read.rows).toEqual([{ id: inserted.insertId, body: "first", n: 1 }]);
    expect(read.fields.map((field) => [field.name, field.type])).toEqual([
      ["id", "INT64"],
      ["body", "VARCHAR"],
      ["n", "INT32"],
    ]);
    expect(read.headers).toEqual(["id", "body", "n"]);
    expect((await conn.execute("UPDATE notes SET n = n + 1 WHERE id = :id", { id: inserted.insertId })).rowsAffected).toBe(1);
    expect((await conn.execute("SELECT n FROM notes WHERE id = ?", [inserted.insertId], { as: "array" })).rows).toEqual([[2]]);
    expect((await conn.execute("DELETE FROM notes WHERE id = ?", [inserted.insertId])).rowsAffected).toBe(1);
    expect((await db.query("SELECT COUNT(*) AS c FROM notes WHERE body = 'first'"))[0]).toEqual({ c: 0 });
  });

  it("commits a transaction's statements together, and its reads see its own writes", async () => {
    const seen = await app().transaction(async (tx) => {
      await tx.execute("INSERT INTO notes (body, n) VALUES ('tx-a', 1)");
      await tx.execute("INSERT INTO notes (body, n) VALUES ('tx-b', 2)");
      // Not yet visible outside the transaction.
      expect(await db.query("SELECT body FROM notes WHERE body LIKE 'tx-%'")).toEqual([]);
      return (await tx.execute("SELECT COUNT(*) AS c FROM notes WHERE body LIKE 'tx-%'")).rows;
    });
    expect(seen).toEqual([{ c: "2" }]);
    expect(await db.query("SELECT body FROM notes WHERE body LIKE 'tx-%' ORDER BY body")).toEqual([{ body: "tx-a" }, { body: "tx-b" }]);
  });

  it("rolls a transaction back when its function throws, and after a statement fails in it", async () => {
    await expect(
      app().transaction(async (tx) => {
        await tx.execute("INSERT INTO notes (body) VALUES ('rolled-1')");
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    const err = await failure(
      app().transaction(async (tx) => {
        await tx.execute("INSERT INTO notes (body) VALUES ('rolled-2')");
        await tx.execute("INSERT INTO notes (body) VALUES ('rolled-2')");
      }),
    );
    expect(err.body.code).toBe("ALREADY_EXISTS");
    expect(await db.query("SELECT body FROM notes WHERE body LIKE 'rolled-%'")).toEqual([]);
  });

  it("runs BEGIN, COMMIT and ROLLBACK sent by hand as a MySQL session does", async () => {
    const conn = app();
    await conn.execute("COMMIT"); // none open: nothing to do
    await conn.execute("START TRANSACTION");
    await conn.execute("INSERT INTO notes (body) VALUES ('manual-1')");
    await conn.execute("BEGIN"); // commits the open one first
    await conn.execute("INSERT INTO notes (body) VALUES ('manual-2')");
    await conn.execute("SAVEPOINT sp");
    await conn.execute("INSERT INTO notes (body) VALUES ('manual-3')");
    await conn.execute("ROLLBACK TO SAVEPOINT sp");
    expect(await db.query("SELECT body FROM notes WHERE body LIKE 'manual-%'")).toEqual([{ body: "manual-1" }]);
    await conn.execute("ROLLBACK");
    await conn.execute("ROLLBACK"); // none open: nothing to do
    expect(await db.query("SELECT body FROM notes WHERE body LIKE 'manual-%'")).toEqual([{ body: "manual-1" }]);
  });

  it("round-trips every common type exactly as MariaDB's text protocol sends it", async () => {
    await db.query(`CREATE TABLE types (${TYPES.map(([name, column]) => `${name} ${column}`).join(", ")})`);
    await app().execute(`INSERT INTO types VALUES (${TYPES.map(([, , literal]) => literal).join(", ")})`);
    const result = await app().execute("SELECT * FROM types");
    expect(result.fields.map((field) => [field.name, field.type])).toEqual(TYPES.map(([name, , , vitess]) => [name, vitess]));
    // The server's own bytes for each value, read over its text protocol, through the driver's cast.
    const direct = await mysql.createConnection({ uri: db.url, typeCast: (field) => field.buffer() });
    try {
      const [rows] = (await direct.query({ sql: "SELECT * FROM types", rowsAsArray: true })) as unknown as [(Buffer | null)[][]];
      const expected = Object.fromEntries(
        TYPES.map(([name], i) => {
          const raw = rows[0]?.[i] ?? null;
          const field = result.fields[i] as Field;
          return [name, cast(field, raw === null ? null : raw.toString("latin1"))];
        }),
      );
      expect(result.rows[0]).toEqual(expected);
    } finally {
      await direct.end();
    }
    const row = result.rows[0] as Record<string, unknown>;
    expect(row).toMatchObject({
      ti: -128,
      tu: 255,
      bmin: "-9223372036854775808",
      bmax: "9223372036854775807",
      bu: "18446744073709551615",
      d: "-12345678901234567890.12345678901234567890",
      f: 3.14159,
      db: 1.7976931348623157e308,
      dt: "1969-07-20",
      dtm: "2024-02-29 13:14:15.123456",
      dt0: "2024-02-29 13:14:15.000",
      ts: "2038-01-19 03:14:07.999",
      tm: "-838:59:59.00",
      y: 2155,
      c: "ab",
      vc: "héllo wörld ☃ 😀",
      tx: 'line one\nline "two"',
      // JSON.parse in the driver: a double, as from PlanetScale itself.
      js: { big: 1.2345678901234568e22, s: "ü", a: [1, null] },
      en: "busy",
      st: "a,c",
      nl: null,
    });
    expect(row.bl).toEqual(new Uint8Array([0, 1, 2, 0xfd, 0xfe, 0xff]));
    expect(row.bn).toEqual(new Uint8Array([0, 0xff, 0x7f, 0x80]));
    expect(row.bt).toEqual(new Uint8Array([5]));
  });

  it("writes values the driver formats into the text and reads them back unchanged", async () => {
    await db.query("CREATE TABLE formatted (id INT PRIMARY KEY, big BIGINT, at DATETIME(3), raw VARBINARY(16), note VARCHAR(50), flag BOOLEAN)");
    const at = new Date("2024-05-06T07:08:09.123Z");
    await app().execute("INSERT INTO formatted VALUES (?, ?, ?, ?, ?, ?)", [1, "-9223372036854775808", at, new Uint8Array([0, 39, 92, 255]), "it's \\ \"quoted\"\n", true]);
    const { rows } = await app().execute("SELECT big, at, raw, note, flag FROM formatted WHERE id = 1");
    expect(rows).toEqual([{ big: "-9223372036854775808", at: "2024-05-06 07:08:09.123", raw: new Uint8Array([0, 39, 92, 255]), note: "it's \\ \"quoted\"\n", flag: 1 }]);
  });

  it("answers a syntax error and a duplicate key with MySQL's error number and SQLSTATE", async () => {
    const syntax = await failure(app().execute("SELEC 1"));
    expect(syntax.status).toBe(400);
    expect(syntax.body.code).toBe("INVALID_ARGUMENT");
    expect(syntax.message).toMatch(/You have an error in your SQL syntax.* \(errno 1064\) \(sqlstate 42000\)$/);
    await app().execute("INSERT INTO notes (body) VALUES ('dup')");
    const duplicate = await failure(app().execute("INSERT INTO notes (body) VALUES ('dup')"));
    expect(duplicate.body.code).toBe("ALREADY_EXISTS");
    expect(duplicate.message).toMatch(/^Duplicate entry 'dup' for key 'body' \(errno 1062\) \(sqlstate 23000\)$/);
    expect((duplicate.body as unknown as { poolgateCode: string }).poolgateCode).toBe("DATABASE_ERROR");
  });

  it("lets a read-only principal read and refuses its writes, in and out of transactions", async () => {
    const reader = connect({ url: url("reader", TOKENS.reader) });
    expect((await reader.execute("SELECT 1 + 1 AS two")).rows).toEqual([{ two: 2 }]);
    const write = await failure(reader.execute("INSERT INTO notes (body) VALUES ('reader')"));
    expect(write.body.code).toBe("PERMISSION_DENIED");
    expect((write.body as unknown as { poolgateCode: string }).poolgateCode).toBe("FORBIDDEN");
    await failure(reader.transaction((tx) => tx.execute("DELETE FROM notes")));
    expect(await db.query("SELECT body FROM notes WHERE body = 'reader'")).toEqual([]);
  });

  it("refuses a wrong token, a token under another principal's name and a username without a cluster", async () => {
    expect((await failure(connect({ url: url("app", "wrong-token-0123456789abcdef0123456") }).execute("SELECT 1"))).status).toBe(401);
    const swapped = await failure(connect({ url: url("app", TOKENS.reader) }).execute("SELECT 1"));
    expect(swapped.status).toBe(401);
    expect(swapped.body.code).toBe("UNAUTHENTICATED");
    const noCluster = await failure(connect({ host: new URL(gateway.baseUrl).host, username: "app", password: TOKENS.app, fetch: (input, init) => fetch(input.replace("https:", "http:"), init) }).execute("SELECT 1"));
    expect(noCluster.body.code).toBe("INVALID_ARGUMENT");
    expect(noCluster.message).toMatch(/<principal>@<cluster>/);
  });

  it("keys a write exactly once with the Idempotency-Key header", async () => {
    const session = { poolgate: 1, cluster: CLUSTER };
    const headers = { authorization: `Basic ${Buffer.from(`app@${CLUSTER}:${TOKENS.app}`).toString("base64")}`, "idempotency-key": `ps-${randomUUID()}` };
    const first = await gateway.post(EXECUTE, { query: "INSERT INTO notes (body) VALUES ('keyed')", session }, headers);
    expect(first.status).toBe(200);
    expect(first.headers.get("x-poolgate-idempotent-replay")).toBeNull();
    const again = await gateway.post(EXECUTE, { query: "INSERT INTO notes (body) VALUES ('keyed')", session }, headers);
    expect(again.status).toBe(200);
    expect(again.headers.get("x-poolgate-idempotent-replay")).toBe("true");
    expect((again.body as { result: unknown }).result).toEqual((first.body as { result: unknown }).result);
    expect(await db.query("SELECT COUNT(*) AS c FROM notes WHERE body = 'keyed'")).toEqual([{ c: 1 }]);
  });

  it("serves drizzle planetscale-serverless: CRUD and transactions, committed and rolled back", async () => {
    await db.query("CREATE TABLE people (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50) NOT NULL, karma BIGINT NOT NULL)");
    const people = mysqlTable("people", { id: int("id").autoincrement().primaryKey(), name: varchar("name", { length: 50 }).notNull(), karma: bigint("karma", { mode: "bigint" }).notNull() });
    const orm = drizzle({ client: new Client({ url: url("app", TOKENS.app) }) });
    await orm.insert(people).values([{ name: "ada", karma: 9223372036854775807n }, { name: "bob", karma: -1n }]);
    expect(await orm.select().from(people).where(eq(people.name, "ada"))).toEqual([{ id: 1, name: "ada", karma: 9223372036854775807n }]);
    await orm.update(people).set({ karma: 2n }).where(eq(people.name, "bob"));
    await orm.transaction(async (tx) => {
      await tx.insert(people).values({ name: "cy", karma: 3n });
      await tx.delete(people).where(eq(people.name, "ada"));
      // A nested transaction is a savepoint in the gateway's transaction.
      await expect(
        tx.transaction(async (nested) => {
          await nested.insert(people).values({ name: "eve", karma: 5n });
          nested.rollback();
        }),
      ).rejects.toThrow();
    });
    await expect(
      orm.transaction(async (tx) => {
        await tx.insert(people).values({ name: "dee", karma: 4n });
        tx.rollback();
      }),
    ).rejects.toThrow();
    expect((await orm.select({ name: people.name, karma: people.karma }).from(people).orderBy(people.name)).map((p) => [p.name, p.karma])).toEqual([
      ["bob", 2n],
      ["cy", 3n],
    ]);
  });

  it("round-trips drizzle's column types exactly as drizzle on mysql2 reads them straight from the database", async () => {
    await db.query(`CREATE TABLE kinds (id INT AUTO_INCREMENT PRIMARY KEY, ti TINYINT, si SMALLINT, mi MEDIUMINT, big BIGINT, bu BIGINT UNSIGNED,
      dec40 DECIMAL(40,20), f FLOAT, dbl DOUBLE, flag BOOLEAN, day DATE, at DATETIME(3), atText DATETIME(6), ts TIMESTAMP(3) NULL, tm TIME(2), y YEAR,
      c CHAR(4), vc VARCHAR(40), tx TEXT, bn BINARY(4), vb VARBINARY(8), js JSON, en ENUM('calm','busy'))`);
    const kinds = mysqlTable("kinds", {
      id: int("id").autoincrement().primaryKey(),
      ti: tinyint("ti"),
      si: smallint("si"),
      mi: mediumint("mi"),
      big: bigint("big", { mode: "bigint" }),
      bu: bigint("bu", { mode: "bigint", unsigned: true }),
      dec40: decimal("dec40", { precision: 40, scale: 20 }),
      f: float("f"),
      dbl: double("dbl"),
      flag: boolean("flag"),
      day: date("day", { mode: "date" }),
      at: datetime("at", { fsp: 3, mode: "date" }),
      atText: datetime("atText", { fsp: 6, mode: "string" }),
      ts: timestamp("ts", { fsp: 3, mode: "date" }),
      tm: time("tm", { fsp: 2 }),
      y: year("y"),
      c: char("c", { length: 4 }),
      vc: varchar("vc", { length: 40 }),
      tx: text("tx"),
      bn: binary("bn", { length: 4 }),
      vb: varbinary("vb", { length: 8 }),
      js: json("js"),
      en: mysqlEnum("en", ["calm", "busy"]),
    });
    const full = {
      ti: -128,
      si: -32768,
      mi: 8388607,
      big: -9223372036854775808n,
      bu: 18446744073709551615n,
      dec40: "-12345678901234567890.12345678901234567890",
      f: 3.25,
      dbl: 0.1 + 0.2,
      flag: true,
      day: new Date("1969-07-20T00:00:00.000Z"),
      at: new Date("2024-02-29T13:14:15.123Z"),
      atText: "2024-02-29 13:14:15.123456",
      ts: new Date("2038-01-19T03:14:07.999Z"),
      tm: "-838:59:59.00",
      y: 2155,
      c: "ab",
      vc: "héllo wörld ☃ 😀",
      tx: 'line one\nline "two" \\',
      bn: "1a\u00001",
      vb: "x1y",
      js: { s: "ü", a: [1, null], n: 1.5 },
      en: "busy" as const,
    };
    const orm = drizzle({ client: new Client({ url: url("app", TOKENS.app) }) });
    await orm.insert(kinds).values([full, {}]);
    const viaGateway = await orm.select().from(kinds).orderBy(kinds.id);
    // mysql2 reads BIGINT UNSIGNED exactly only as a string.
    const direct = await mysql.createConnection({ uri: db.url, supportBigNumbers: true, bigNumberStrings: true });
    let straight: unknown[];
    try {
      straight = await drizzleOnMysql2({ client: direct }).select().from(kinds).orderBy(kinds.id);
    } finally {
      await direct.end();
    }
    // drizzle's binary and varbinary columns make a string of the driver's value: mysql2's Buffer as its
    // text, @planetscale/database's Uint8Array (its cast of BINARY and VARBINARY) as one "1" or "0" per
    // byte. That is drizzle's own mapping of this driver's values, the same against PlanetScale: here it
    // is given the exact bytes MariaDB holds, and must answer what the gateway's answer became.
    const bytesAsDrizzleSeesThem = (column: typeof kinds.bn | typeof kinds.vb, text: string) => column.mapFromDriverValue(new Uint8Array(Buffer.from(text)));
    expect(viaGateway).toEqual(
      straight.map((row) => {
        const { bn, vb } = row as { bn: string | null; vb: string | null };
        return { ...(row as object), bn: bn === null ? null : bytesAsDrizzleSeesThem(kinds.bn, bn), vb: vb === null ? null : bytesAsDrizzleSeesThem(kinds.vb, vb) };
      }),
    );
    expect(viaGateway[0]).toEqual({ id: 1, ...full, bn: "1001", vb: "010" });
    expect(Object.entries(viaGateway[1] ?? {}).filter(([, value]) => value !== null)).toEqual([["id", 2]]);
  });

  it("hands the driver's error on as the cause of drizzle's, with MySQL's error number", async () => {
    const orm = drizzle({ client: new Client({ url: url("app", TOKENS.app) }) });
    const notes = mysqlTable("notes", { id: bigint("id", { mode: "number" }).autoincrement().primaryKey(), body: varchar("body", { length: 100 }).notNull(), n: int("n") });
    await orm.insert(notes).values({ body: "orm-dup" });
    const err: unknown = await orm
      .insert(notes)
      .values({ body: "orm-dup" })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(DrizzleQueryError);
    const cause = (err as DrizzleQueryError).cause;
    expect(cause).toBeInstanceOf(DatabaseError);
    expect((cause as DatabaseError).body.code).toBe("ALREADY_EXISTS");
    expect((cause as DatabaseError).message).toMatch(/^Duplicate entry 'orm-dup' for key 'body' \(errno 1062\) \(sqlstate 23000\)$/);
  });

  it("counts its requests under the Execute route in the metrics", async () => {
    const metrics = await fetch(`${gateway.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKENS.ops}` } });
    expect(await metrics.text()).toMatch(/poolgate_request_duration_seconds_count\{[^}]*route="\/psdb\.v1alpha1\.Database\/Execute"/);
  });
});
