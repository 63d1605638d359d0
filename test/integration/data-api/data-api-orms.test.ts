/**
 * The Data API ORMs, unmodified, against the gateway: drizzle-orm's `aws-data-api/pg` driver (CRUD and
 * a transaction that commits and one that rolls back) on PostgreSQL, and kysely-data-api (CRUD and a
 * transaction) on PostgreSQL and MariaDB. Only the client's `endpoint` differs from production.
 */
import { RDSData } from "@aws-sdk/client-rds-data";
import { asc, eq, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/aws-data-api/pg";
import { boolean, integer, jsonb, numeric, pgTable, serial, text, timestamp } from "drizzle-orm/pg-core";
import { Kysely, type Generated } from "kysely";
import { DataApiDialect } from "kysely-data-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase, type TestMysqlDatabase } from "../../support/mysql.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";
import { dataApiClient, RESOURCE_ARN, SECRET_ARN } from "./data-api-suite.js";

const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" };

describe("drizzle-orm aws-data-api/pg through the gateway", () => {
  let db: TestDatabase;
  let gw: TestGateway;

  const users = pgTable("users", {
    id: serial("id").primaryKey(),
    name: text("name").notNull(),
    verified: boolean("verified").notNull().default(false),
    balance: numeric("balance", { precision: 10, scale: 2 }),
    meta: jsonb("meta").$type<{ tags: string[] }>(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    visits: integer("visits").notNull().default(0),
  });

  beforeAll(async () => {
    db = await createTestDatabase();
    gw = await startTestGateway({ clusters: { default: { writerUrl: db.url } } });
  });

  afterAll(async () => {
    await gw?.stop();
    await db?.drop();
  });

  it("creates, reads, updates and deletes, and runs transactions that commit and roll back", async () => {
    const client = dataApiClient(gw.baseUrl);
    const orm = drizzle(client, { database: db.name, resourceArn: RESOURCE_ARN, secretArn: SECRET_ARN });
    try {
      await orm.execute(sql`create table users (id serial primary key, name text not null, verified boolean not null default false, balance numeric(10,2), meta jsonb, created_at timestamptz not null default now(), visits int not null default 0)`);
      const at = new Date("2024-02-03T04:05:06.789Z");
      const inserted = await orm
        .insert(users)
        .values([
          { name: "Ada", balance: "12.50", meta: { tags: ["a", "b"] }, createdAt: at },
          { name: "Linus", verified: true },
        ])
        .returning();
      expect(inserted.map((user) => user.name)).toEqual(["Ada", "Linus"]);
      expect(inserted[0]).toMatchObject({ id: 1, balance: "12.50", meta: { tags: ["a", "b"] }, verified: false, visits: 0 });
      expect(inserted[0]?.createdAt.toISOString()).toBe(at.toISOString());

      const ada = await orm.select().from(users).where(eq(users.name, "Ada"));
      expect(ada).toHaveLength(1);
      expect(ada[0]?.meta).toEqual({ tags: ["a", "b"] });

      const updated = await orm.update(users).set({ visits: sql`${users.visits} + 1` }).where(eq(users.id, 2)).returning({ visits: users.visits });
      expect(updated).toEqual([{ visits: 1 }]);

      await orm.transaction(async (tx) => {
        await tx.insert(users).values({ name: "Grace" });
        await tx.update(users).set({ verified: true }).where(eq(users.name, "Ada"));
        // A nested transaction is a savepoint; this one rolls back alone.
        await expect(
          tx.transaction(async (nested) => {
            await nested.insert(users).values({ name: "Nested" });
            throw new Error("nested abort");
          }),
        ).rejects.toThrow("nested abort");
      });
      await expect(
        orm.transaction(async (tx) => {
          await tx.insert(users).values({ name: "Rolled back" });
          throw new Error("changed my mind");
        }),
      ).rejects.toThrow("changed my mind");

      const all = await orm.select({ name: users.name, verified: users.verified }).from(users).orderBy(asc(users.id));
      expect(all).toEqual([
        { name: "Ada", verified: true },
        { name: "Linus", verified: true },
        { name: "Grace", verified: false },
      ]);

      await orm.delete(users).where(eq(users.name, "Linus"));
      const raw = await orm.execute(sql`select count(*)::int as n from users`);
      expect(raw.records).toEqual([[{ longValue: 2 }]]);
    } finally {
      client.destroy();
    }
  });
});

interface KyselyDatabase {
  pets: { id: Generated<number>; name: string; species: string; born: Date | null };
}

for (const engine of ["postgres", "mysql"] as const) {
  describe(`kysely-data-api (${engine}) through the gateway`, () => {
    let pgDb: TestDatabase | undefined;
    let myDb: TestMysqlDatabase | undefined;
    let gw: TestGateway;
    let database: string;

    beforeAll(async () => {
      if (engine === "postgres") {
        pgDb = await createTestDatabase();
        database = pgDb.name;
      } else {
        myDb = await createTestMysqlDatabase();
        database = myDb.name;
      }
      gw = await startTestGateway({ clusters: { default: { writerUrl: pgDb?.url ?? myDb?.url ?? "" } } });
    });

    afterAll(async () => {
      await gw?.stop();
      await pgDb?.drop();
      await myDb?.drop();
    });

    it("creates, reads, updates and deletes, with a transaction", async () => {
      const client = new RDSData({ region: "us-east-1", endpoint: gw.baseUrl, credentials, maxAttempts: 1 });
      const db = new Kysely<KyselyDatabase>({
        dialect: new DataApiDialect({ mode: engine, driver: { client, database, secretArn: SECRET_ARN, resourceArn: RESOURCE_ARN } }),
      });
      try {
        await db.schema
          .createTable("pets")
          .addColumn("id", engine === "postgres" ? "serial" : "integer", (column) => (engine === "postgres" ? column.primaryKey() : column.primaryKey().autoIncrement()))
          .addColumn("name", "varchar(50)", (column) => column.notNull())
          .addColumn("species", "varchar(50)", (column) => column.notNull())
          .addColumn("born", "date")
          .execute();
        // A Date goes with typeHint TIMESTAMP; a bare string would be text, which a date column refuses (as on the service).
        const inserted = await db.insertInto("pets").values({ name: "Rex", species: "dog", born: new Date("2020-05-06T00:00:00Z") }).executeTakeFirst();
        expect(Number(inserted.numInsertedOrUpdatedRows)).toBe(1);
        if (engine === "mysql") expect(Number(inserted.insertId)).toBe(1);
        await db.insertInto("pets").values([{ name: "Tom", species: "cat", born: null }, { name: "Kit", species: "cat", born: null }]).execute();

        const cats = await db.selectFrom("pets").select(["name", "species"]).where("species", "=", "cat").orderBy("name").execute();
        expect(cats).toEqual([
          { name: "Kit", species: "cat" },
          { name: "Tom", species: "cat" },
        ]);
        const rex = await db.selectFrom("pets").selectAll().where("name", "=", "Rex").executeTakeFirstOrThrow();
        expect(rex.id).toBe(1);
        expect(new Date(rex.born as unknown as string).toISOString().slice(0, 10)).toBe("2020-05-06");

        const updated = await db.updateTable("pets").set({ species: "lion" }).where("name", "=", "Tom").executeTakeFirst();
        expect(Number(updated.numUpdatedRows)).toBe(1);

        await db.transaction().execute(async (tx) => {
          await tx.insertInto("pets").values({ name: "Tx", species: "fish", born: null }).execute();
          await tx.deleteFrom("pets").where("name", "=", "Kit").execute();
        });
        await expect(
          db.transaction().execute(async (tx) => {
            await tx.insertInto("pets").values({ name: "Ghost", species: "fish", born: null }).execute();
            throw new Error("abort");
          }),
        ).rejects.toThrow("abort");

        const names = await db.selectFrom("pets").select("name").orderBy("name").execute();
        expect(names.map((row) => row.name)).toEqual(["Rex", "Tom", "Tx"]);
        const deleted = await db.deleteFrom("pets").where("species", "=", "fish").executeTakeFirst();
        expect(Number(deleted.numDeletedRows)).toBe(1);
      } finally {
        await db.destroy();
        client.destroy();
      }
    });
  });
}
