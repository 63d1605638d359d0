/**
 * One gateway serving a PostgreSQL cluster and a MySQL cluster at the same time: requests name their
 * cluster (or get the default), and each cluster's statements, transactions and errors stay with its
 * own engine.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase, type TestMysqlDatabase } from "../../support/mysql.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

let pgDb: TestDatabase;
let myDb: TestMysqlDatabase;
let gw: TestGateway;

beforeAll(async () => {
  [pgDb, myDb] = await Promise.all([createTestDatabase(), createTestMysqlDatabase()]);
  gw = await startTestGateway({
    defaultCluster: "orders",
    clusters: { orders: { writerUrl: pgDb.url }, catalog: { writerUrl: myDb.url } },
    pool: { maxSize: 2 },
  });
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([pgDb?.drop(), myDb?.drop()]);
});

describe("a gateway with a PostgreSQL and a MySQL cluster", () => {
  it("sends each request to the cluster it names, and the rest to the default", async () => {
    const byDefault = await gw.post("/v1/query", { sql: "select version() as v" });
    expect(byDefault.body.rows[0].v).toMatch(/^PostgreSQL/);
    const named = await gw.post("/v1/query", { sql: "select version() as v", cluster: "catalog" });
    expect(named.body.rows[0].v).toMatch(/MariaDB|^\d+\.\d+/);
    const health = await gw.get("/healthz");
    expect(health.body.clusters.orders.engine).toBe("postgres");
    expect(health.body.clusters.catalog.engine).toBe("mysql");
  });

  it("keeps each engine's placeholders, transactions and errors apart", async () => {
    await gw.post("/v1/query", { sql: "create table t (id int primary key, note text)" });
    await gw.post("/v1/query", { sql: "create table t (id int primary key, note varchar(20))", cluster: "catalog" });
    expect((await gw.post("/v1/query", { sql: "insert into t values ($1, $2)", params: [1, "pg"] })).status).toBe(200);
    const tx = (await gw.post("/v1/transactions", { cluster: "catalog" })).body.transactionId;
    expect((await gw.post("/v1/query", { sql: "insert into t values (?, ?)", params: [1, "my"], transactionId: tx })).status).toBe(200);
    expect((await gw.post(`/v1/transactions/${tx}/commit`, undefined)).body.outcome).toBe("committed");
    expect((await gw.post("/v1/query", { sql: "select note from t" })).body.rows).toEqual([{ note: "pg" }]);
    expect((await gw.post("/v1/query", { sql: "select note from t", cluster: "catalog" })).body.rows).toEqual([{ note: "my" }]);
    const pgError = await gw.post("/v1/query", { sql: "insert into t values (1, 'again')" });
    const myError = await gw.post("/v1/query", { sql: "insert into t values (1, 'again')", cluster: "catalog" });
    expect(pgError.body.error.database).toMatchObject({ sqlstate: "23505" });
    expect(myError.body.error.database).toMatchObject({ sqlstate: "23000", engineCode: 1062 });
  });
});
