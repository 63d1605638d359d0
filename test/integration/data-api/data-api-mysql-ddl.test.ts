/**
 * MySQL DDL inside a transaction, on MariaDB: the Data API runs it as the service does (MySQL commits
 * the open transaction implicitly, and what follows is a new transaction that Commit or Rollback
 * ends), while the native API keeps refusing it, because its transactions promise all or nothing.
 */
import { BeginTransactionCommand, ExecuteStatementCommand, type RDSDataClient, RollbackTransactionCommand } from "@aws-sdk/client-rds-data";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase, type TestMysqlDatabase } from "../../support/mysql.js";
import { dataApiClient, RESOURCE_ARN, SECRET_ARN } from "./data-api-suite.js";

describe("MySQL DDL inside a transaction", () => {
  let db: TestMysqlDatabase;
  let gw: TestGateway;
  let client: RDSDataClient;
  const target = { resourceArn: RESOURCE_ARN, secretArn: SECRET_ARN };

  beforeAll(async () => {
    db = await createTestMysqlDatabase();
    await db.query("create table log (id int primary key)");
    gw = await startTestGateway({ clusters: { default: { writerUrl: db.url } } });
    client = dataApiClient(gw.baseUrl);
  });

  afterAll(async () => {
    client?.destroy();
    await gw?.stop();
    await db?.drop();
  });

  it("runs on the Data API with MySQL's implicit commit; what follows is a new transaction", async () => {
    const { transactionId } = await client.send(new BeginTransactionCommand(target));
    const inTransaction = (sql: string) => client.send(new ExecuteStatementCommand({ ...target, transactionId, sql }));
    await inTransaction("insert into log values (1)");
    await inTransaction("create table made_in_a_transaction (id int)");
    await inTransaction("insert into log values (2)");
    await client.send(new RollbackTransactionCommand({ ...target, transactionId }));

    // The CREATE committed row 1 and itself; the rollback undid row 2 only.
    expect(await db.query("select id from log order by id")).toEqual([{ id: 1 }]);
    expect(await db.query("select count(*) as n from information_schema.tables where table_schema = database() and table_name = 'made_in_a_transaction'")).toEqual([{ n: 1 }]);
  });

  it("is refused in a native API transaction, which stays atomic", async () => {
    const begun = await gw.post("/v1/transactions", {});
    const refused = await gw.post("/v1/query", { sql: "create table refused (id int)", transactionId: begun.body.transactionId });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("INVALID_REQUEST");
    expect((await gw.post(`/v1/transactions/${begun.body.transactionId}/rollback`, undefined)).body.outcome).toBe("rolled back");
  });
});
