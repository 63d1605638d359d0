/**
 * Prisma Client 7 through Prisma's own Neon HTTP adapter (`@prisma/adapter-neon`'s PrismaNeonHttp, on
 * the unmodified `@neondatabase/serverless` driver with `neonConfig.fetchEndpoint` pointed at the
 * gateway) against the local PostgreSQL: CRUD with exact timestamps, createMany, a unique violation,
 * and the adapter's own refusal of transactions, interactive and batch alike (PrismaNeonHttp
 * 7.10.0's startTransaction rejects; Prisma runs a batch $transaction through it too). The client is
 * the one generated from test/support/prisma/postgres.prisma.
 */
import { neonConfig } from "@neondatabase/serverless";
import { PrismaNeonHttp } from "@prisma/adapter-neon";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTransactions, startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";
import { PrismaClient } from "../../support/prisma/generated/postgres/client.js";

describe("Prisma Client through PrismaNeonHttp on Neon's door", () => {
  let db: TestDatabase;
  let gateway: TestGateway;
  let prisma: PrismaClient;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.admin.query(
      "create table users (id serial primary key, email text not null unique, name text not null, active boolean not null default true, score int not null default 0, created_at timestamp(3) not null default current_timestamp)",
    );
    // Authentication off (loopback): the connection string's database names the cluster.
    gateway = await startTestGateway({ clusters: { main: { writerUrl: db.url } }, defaultCluster: "main" });
    neonConfig.fetchEndpoint = `${gateway.baseUrl}/sql`;
    prisma = new PrismaClient({ adapter: new PrismaNeonHttp("postgresql://anyone:unused@gateway.example/main", {}) });
  });

  afterAll(async () => {
    await prisma?.$disconnect();
    await gateway?.stop();
    await db?.drop();
  });

  it("creates, finds, updates and deletes, with timestamps exact to the millisecond", async () => {
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
    expect((await prisma.user.createMany({ data: [{ email: "m1@example.com", name: "M1" }, { email: "m2@example.com", name: "M2", score: 2 }] })).count).toBe(2);
    expect(await prisma.user.findMany({ where: { email: { startsWith: "m" } }, orderBy: { email: "asc" }, select: { name: true, score: true } })).toEqual([
      { name: "M1", score: 0 },
      { name: "M2", score: 2 },
    ]);
  });

  it("answers a unique violation with PostgreSQL's SQLSTATE, as the adapter hands the driver's error on over HTTP", async () => {
    // PrismaNeonHttp's performIO does not map errors (its WebSocket adapter does): Prisma reports the driver's code.
    await expect(prisma.user.create({ data: { email: "ada@example.com", name: "twin" } })).rejects.toMatchObject({
      code: "23505",
      message: expect.stringContaining("duplicate key value violates unique constraint") as unknown,
    });
  });

  it("leaves transactions to the adapter, which refuses both kinds over HTTP", async () => {
    await expect(prisma.$transaction(async (tx) => tx.user.count())).rejects.toThrow("Transactions are not supported in HTTP mode");
    await expect(prisma.$transaction([prisma.user.count(), prisma.user.count()])).rejects.toThrow("Transactions are not supported in HTTP mode");
    expect(openTransactions(gateway)).toBe(0);
  });
});
