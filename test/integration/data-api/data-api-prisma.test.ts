/**
 * Prisma Client 7 on the gateway's Data API surface, through a Data API driver adapter that makes the
 * calls data-api-client's Prisma adapter makes (test/support/prisma-data-api-adapter.ts): CRUD,
 * createMany, batch and interactive $transaction, and an interactive transaction rolled back by a
 * throw, on PostgreSQL and MariaDB. Prisma ends its transactions by sending COMMIT or ROLLBACK as SQL
 * through ExecuteStatement and then calling CommitTransaction or RollbackTransaction (issue 33 §7).
 * The clients are generated from test/support/prisma/*.prisma and committed beside them.
 */
import { readFileSync } from "node:fs";
import { RDSDataClient } from "@aws-sdk/client-rds-data";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTransactions, startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase } from "../../support/mysql.js";
import { createTestDatabase } from "../../support/postgres.js";
import { dataApiPrismaAdapter } from "../../support/prisma-data-api-adapter.js";
import { PrismaClient as PostgresPrisma } from "../../support/prisma/generated/postgres/client.js";
import { PrismaClient as MysqlPrisma } from "../../support/prisma/generated/mysql/client.js";
import { RESOURCE_ARN, SECRET_ARN } from "./data-api-suite.js";

/** The two generated clients have the same model; one type serves both. */
type Prisma = InstanceType<typeof PostgresPrisma>;

interface Target {
  engine: "postgres" | "mysql";
  setup(): Promise<{ url: string; drop(): Promise<void> }>;
  ddl: string;
  client(adapter: ReturnType<typeof dataApiPrismaAdapter>): Prisma;
}

const TARGETS: Target[] = [
  {
    engine: "postgres",
    setup: createTestDatabase,
    ddl: 'create table users (id serial primary key, email text not null unique, name text not null, active boolean not null default true, score int not null default 0, created_at timestamp(3) not null default current_timestamp)',
    client: (adapter) => new PostgresPrisma({ adapter }),
  },
  {
    engine: "mysql",
    setup: createTestMysqlDatabase,
    ddl: "create table users (id int auto_increment primary key, email varchar(191) not null unique, name varchar(191) not null, active boolean not null default true, score int not null default 0, created_at datetime(3) not null default current_timestamp(3))",
    client: (adapter) => new MysqlPrisma({ adapter }) as unknown as Prisma,
  },
];

describe.each(TARGETS)("Prisma Client through a Data API adapter on $engine", (target) => {
  let gw: TestGateway;
  let drop: () => Promise<void>;
  let client: RDSDataClient;
  let prisma: Prisma;
  /** What the adapter sent inside transactions. */
  const sentInTransactions: string[] = [];

  beforeAll(async () => {
    const db = await target.setup();
    drop = () => db.drop();
    gw = await startTestGateway({
      clusters: { default: { writerUrl: db.url } },
      dataApi: { resources: { [RESOURCE_ARN]: { cluster: "default", secrets: { [SECRET_ARN]: {} } } } },
    });
    client = new RDSDataClient({ region: "us-east-1", endpoint: gw.baseUrl, credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" }, maxAttempts: 1 });
    const adapter = dataApiPrismaAdapter({
      client,
      engine: target.engine,
      resourceArn: RESOURCE_ARN,
      secretArn: SECRET_ARN,
      onStatement: (sql, transactionId) => {
        if (transactionId !== undefined) sentInTransactions.push(sql.trim().toUpperCase());
      },
    });
    prisma = target.client(adapter);
    await prisma.$executeRawUnsafe(target.ddl);
  });

  afterAll(async () => {
    await prisma?.$disconnect();
    client?.destroy();
    await gw?.stop();
    await drop?.();
  });

  it("uses a client generated from the committed schema, for the pinned @prisma/client", () => {
    const read = (path: string) => readFileSync(new URL(`../../support/prisma/${path}`, import.meta.url), "utf8");
    const generated = read(`generated/${target.engine}/internal/class.ts`);
    const inlineSchema = /"inlineSchema": ("(?:[^"\\]|\\.)*")/.exec(generated)?.[1];
    expect(JSON.parse(inlineSchema ?? '""')).toBe(read(`${target.engine}.prisma`));
    const pinned = (JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { devDependencies: Record<string, string> }).devDependencies["@prisma/client"];
    expect(/"clientVersion": "([^"]+)"/.exec(generated)?.[1]).toBe(pinned);
  });

  it("creates, finds, updates and deletes", async () => {
    const createdAt = new Date("2024-02-03T04:05:06.789Z");
    const ada = await prisma.user.create({ data: { email: "ada@example.com", name: "Ada", createdAt } });
    expect(ada).toMatchObject({ email: "ada@example.com", name: "Ada", active: true, score: 0 });
    expect(ada.createdAt.toISOString()).toBe(createdAt.toISOString());
    await prisma.user.create({ data: { email: "linus@example.com", name: "Linus", active: false } });

    expect((await prisma.user.findMany({ orderBy: { email: "asc" } })).map((user) => user.name)).toEqual(["Ada", "Linus"]);
    expect(await prisma.user.findUnique({ where: { email: "linus@example.com" } })).toMatchObject({ active: false });

    const updated = await prisma.user.update({ where: { id: ada.id }, data: { score: { increment: 5 }, name: "Ada L." } });
    expect(updated).toMatchObject({ id: ada.id, name: "Ada L.", score: 5 });

    await prisma.user.delete({ where: { email: "linus@example.com" } });
    expect(await prisma.user.count()).toBe(1);
  });

  it("creates many rows at once", async () => {
    const created = await prisma.user.createMany({
      data: [
        { email: "m1@example.com", name: "M1" },
        { email: "m2@example.com", name: "M2", score: 2 },
      ],
    });
    expect(created.count).toBe(2);
    expect(await prisma.user.findMany({ where: { email: { startsWith: "m" } }, orderBy: { email: "asc" }, select: { name: true, score: true } })).toEqual([
      { name: "M1", score: 0 },
      { name: "M2", score: 2 },
    ]);
  });

  it("runs a batch $transaction and an interactive one, each committed with COMMIT sent as SQL", async () => {
    sentInTransactions.length = 0;
    const [first, second] = await prisma.$transaction([
      prisma.user.create({ data: { email: "b1@example.com", name: "B1" } }),
      prisma.user.create({ data: { email: "b2@example.com", name: "B2" } }),
    ]);
    expect([first.name, second.name]).toEqual(["B1", "B2"]);

    const moved = await prisma.$transaction(async (tx) => {
      const from = await tx.user.update({ where: { email: "b1@example.com" }, data: { score: { decrement: 3 } } });
      await tx.user.update({ where: { email: "b2@example.com" }, data: { score: { increment: 3 } } });
      return from.score;
    });
    expect(moved).toBe(-3);
    expect((await prisma.user.findMany({ where: { email: { startsWith: "b" } }, orderBy: { email: "asc" }, select: { score: true } })).map((user) => user.score)).toEqual([-3, 3]);
    expect(sentInTransactions.filter((sql) => sql === "COMMIT")).toHaveLength(2);
    expect(openTransactions(gw)).toBe(0);
  });

  it("rolls back an interactive $transaction whose callback throws, with ROLLBACK sent as SQL", async () => {
    sentInTransactions.length = 0;
    const failure = prisma.$transaction(async (tx) => {
      await tx.user.create({ data: { email: "gone@example.com", name: "Gone" } });
      expect(await tx.user.count({ where: { email: "gone@example.com" } })).toBe(1);
      throw new Error("changed my mind");
    });
    await expect(failure).rejects.toThrow("changed my mind");
    expect(await prisma.user.count({ where: { email: "gone@example.com" } })).toBe(0);
    expect(sentInTransactions).toContain("ROLLBACK");
    expect(openTransactions(gw)).toBe(0);
  });
});
