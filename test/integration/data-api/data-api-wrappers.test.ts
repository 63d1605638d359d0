/**
 * Data API wrappers that take no AWS SDK middleware, unmodified, against a gateway that requires a
 * credential, on PostgreSQL and MariaDB: TypeORM's `aurora-postgres` / `aurora-mysql` drivers
 * (typeorm-aurora-data-api-driver: synchronize, migrations, CRUD, transactions) and data-api-client 1.x
 * (named parameters, hydrated columns, a transaction, a batch). Each differs from production only in
 * its endpoint and the client package's one authentication hook, `poolgateRequestHandler` (data-api-client,
 * written for AWS SDK v2, gets it through `asAwsSdkV2`).
 */
import { RDSData } from "@aws-sdk/client-rds-data";
import dataApiClient from "data-api-client";
import { DataSource, EntitySchema, type MigrationInterface, type QueryRunner } from "typeorm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asAwsSdkV2, poolgateRequestHandler } from "../../../client/data-api.js";
import { type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase } from "../../support/mysql.js";
import { createTestDatabase } from "../../support/postgres.js";

const RESOURCE_ARN = "arn:aws:rds:us-east-1:123456789012:cluster:wrappers";
const SECRET_ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:wrappers";
const TOKEN = "wrapper-app-token-0123456789abcdef";
/** Lambda would use its role's credentials; SigV4 is not checked by the gateway. */
const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" };
/** The one documented hook: every request carries the caller's Poolgate credential. */
const auth = { header: () => Promise.resolve(`Bearer ${TOKEN}`) };

interface Note {
  id: number;
  title: string;
  score: number;
  meta: { tags: string[] } | null;
}

const NoteSchema = new EntitySchema<Note>({
  name: "Note",
  tableName: "notes",
  columns: {
    id: { type: Number, primary: true, generated: "increment" },
    title: { type: String, length: 100 },
    score: { type: "int", default: 0 },
    meta: { type: "simple-json", nullable: true },
  },
});

/** A migration in TypeORM's default mode (all pending migrations in one transaction). */
class CreateTags1700000000000 implements MigrationInterface {
  name = "CreateTags1700000000000";
  async up(runner: QueryRunner): Promise<void> {
    await runner.query("CREATE TABLE tags (id int PRIMARY KEY, label varchar(50) NOT NULL)");
    await runner.query("INSERT INTO tags (id, label) VALUES (1, 'first')");
  }
  async down(runner: QueryRunner): Promise<void> {
    await runner.query("DROP TABLE tags");
  }
}

for (const engine of ["postgres", "mysql"] as const) {
  describe(`Data API wrappers on ${engine}, authenticated by the client package's request handler`, () => {
    let gw: TestGateway;
    let tokens: TokensFile;
    let database: string;
    let drop: () => Promise<void>;

    beforeAll(async () => {
      const db = engine === "postgres" ? await createTestDatabase() : await createTestMysqlDatabase();
      database = db.name;
      drop = () => db.drop();
      tokens = writeTokensFile({ app: TOKEN });
      gw = await startTestGateway({
        clusters: { default: { writerUrl: db.url } },
        auth: { bearer: { tokensFile: tokens.path }, principals: { app: { clusters: { default: "read-write" } } } },
      });
    });

    afterAll(async () => {
      await gw?.stop();
      await drop?.();
      tokens?.remove();
    });

    const typeormOptions = (requestHandler: unknown) => ({
      type: engine === "postgres" ? ("aurora-postgres" as const) : ("aurora-mysql" as const),
      region: "us-east-1",
      secretArn: SECRET_ARN,
      resourceArn: RESOURCE_ARN,
      database,
      // TypeORM 1.1's aurora-postgres driver never learns the default schema, so without this a second
      // synchronize tries to create existing tables again (whatever the endpoint).
      ...(engine === "postgres" ? { schema: "public" } : {}),
      serviceConfigOptions: { endpoint: gw.baseUrl, credentials, maxAttempts: 1, ...(requestHandler ? { requestHandler } : {}) },
      entities: [NoteSchema],
      migrations: [CreateTags1700000000000],
      synchronize: true,
      logging: false,
    });

    it("TypeORM without the hook is refused by the gateway", async () => {
      const source = new DataSource(typeormOptions(undefined));
      await expect(source.initialize()).rejects.toMatchObject({ name: "AccessDeniedException" });
    });

    it("TypeORM synchronizes, migrates, creates, reads, updates and deletes, and runs transactions", async () => {
      const source = new DataSource(typeormOptions(poolgateRequestHandler({ auth })));
      await source.initialize(); // synchronize: the notes table from the entity
      try {
        const migrated = await source.runMigrations();
        expect(migrated.map((migration) => migration.name)).toEqual(["CreateTags1700000000000"]);
        // The aurora drivers' raw query answer is the rows, with the Data API's records attached as a property.
        expect([...await source.query<unknown[]>("SELECT label FROM tags")]).toEqual([{ label: "first" }]);

        const notes = source.getRepository(NoteSchema);
        const saved = await notes.save({ title: "first", score: 2, meta: { tags: ["a", "b"] } });
        expect(saved.id).toBe(1);
        await notes.save([{ title: "second" }, { title: "third", score: 5 }]);
        expect(await notes.findOneByOrFail({ title: "first" })).toEqual({ id: 1, title: "first", score: 2, meta: { tags: ["a", "b"] } });
        await notes.update({ title: "second" }, { score: 9 });
        expect((await notes.findOneByOrFail({ title: "second" })).score).toBe(9);
        await notes.delete({ title: "third" });

        await source.transaction(async (manager) => {
          await manager.getRepository(NoteSchema).save({ title: "in a transaction" });
          await manager.getRepository(NoteSchema).increment({ title: "first" }, "score", 1);
        });
        await expect(
          source.transaction(async (manager) => {
            await manager.getRepository(NoteSchema).save({ title: "rolled back" });
            throw new Error("changed my mind");
          }),
        ).rejects.toThrow("changed my mind");
        const all = await notes.find({ order: { id: "ASC" } });
        expect(all.map((note) => [note.title, note.score])).toEqual([
          ["first", 3],
          ["second", 9],
          ["in a transaction", 0],
        ]);

        // A second synchronize finds nothing to change; reverting the migration drops its table.
        await source.synchronize();
        await source.undoLastMigration();
        await expect(source.query("SELECT label FROM tags")).rejects.toThrow();
      } finally {
        await source.destroy();
      }
    });

    it("data-api-client binds named parameters, hydrates columns, runs a batch and a transaction", async () => {
      const client = dataApiClient({
        engine: engine === "postgres" ? "pg" : "mysql",
        resourceArn: RESOURCE_ARN,
        secretArn: SECRET_ARN,
        database,
        AWS: asAwsSdkV2(new RDSData({ region: "us-east-1", endpoint: gw.baseUrl, credentials, maxAttempts: 1, requestHandler: poolgateRequestHandler({ auth }) })),
      });
      const autoIncrement = engine === "postgres" ? "id serial primary key" : "id int auto_increment primary key";
      await client.query(`create table cats (${autoIncrement}, name varchar(50) not null, lives int not null, nice boolean)`);
      const inserted = await client.query("insert into cats (name, lives, nice) values (:name, :lives, :nice)", { name: "Tom", lives: 9, nice: true });
      expect(inserted.numberOfRecordsUpdated).toBe(1);
      if (engine === "mysql") expect(inserted.insertId).toBe(1);
      await client.query("insert into cats (name, lives, nice) values (:name, :lives, :nice)", [
        [{ name: "Kit", lives: 7, nice: null }],
        [{ name: "Tiger", lives: 1, nice: false }],
      ]);
      const rows = await client.query("select name, lives, nice from cats where lives >= :min order by id", { min: 2 });
      expect(rows.records).toEqual([
        { name: "Tom", lives: 9, nice: true },
        { name: "Kit", lives: 7, nice: null },
      ]);

      const results = await client
        .transaction()
        .query("insert into cats (name, lives) values (:name, :lives)", { name: "Felix", lives: 3 })
        .query("update cats set lives = lives - 1 where name = :name", { name: "Tom" })
        .commit();
      expect(results.at(-1)).toEqual({ transactionStatus: "Transaction Committed" });
      let rolledBackWith: unknown;
      await expect(
        client
          .transaction()
          .query("insert into cats (name, lives) values (:name, :lives)", { name: "Ghost", lives: 0 })
          .query("insert into nope (x) values (:x)", { x: 1 })
          .rollback((_error, status) => (rolledBackWith = status))
          .commit(),
      ).rejects.toMatchObject({ name: "DatabaseErrorException" });
      expect(rolledBackWith).toMatchObject({ transactionStatus: "Rollback Complete" });
      const names = await client.query("select name, lives from cats order by id");
      expect(names.records).toEqual([
        { name: "Tom", lives: 8 },
        { name: "Kit", lives: 7 },
        { name: "Tiger", lives: 1 },
        { name: "Felix", lives: 3 },
      ]);
    });
  });
}
