/**
 * Golden tests: the gateway's raw Data API answers against the worked examples in
 * ../shared/reference/data-api.md (§6 and §14), byte for byte where Poolgate matches the service, and
 * with the documented differences spelled out where it does not (PostgreSQL columnMetadata comes from
 * the row description alone: typeName is the type's own name, not "serial"; tableName is empty;
 * nullability is unknown).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase, type TestMysqlDatabase } from "../../support/mysql.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

const target = { resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:poolgate-test", secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:app-AbCdEf" };

interface RawAnswer {
  status: number;
  errorType: string | null;
  requestId: string | null;
  text: string;
}

async function call(gw: TestGateway, operation: string, body: Record<string, unknown>): Promise<RawAnswer> {
  const response = await fetch(`${gw.baseUrl}/${operation}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...target, ...body }) });
  return {
    status: response.status,
    errorType: response.headers.get("x-amzn-errortype"),
    requestId: response.headers.get("x-amzn-requestid"),
    text: await response.text(),
  };
}

describe("golden Data API answers on PostgreSQL", () => {
  let db: TestDatabase;
  let gw: TestGateway;

  beforeAll(async () => {
    db = await createTestDatabase();
    gw = await startTestGateway({ clusters: { default: { writerUrl: db.url } } });
    await db.admin.query("create table users (id serial primary key, name text, created_at timestamptz)");
    await db.admin.query("insert into users (name, created_at) values ('John', '2024-01-15 12:34:56.123+09')");
  });

  afterAll(async () => {
    await gw?.stop();
    await db?.drop();
  });

  it("§14 arrays, NULLs, numeric and timestamptz in UTC", async () => {
    const answer = await call(gw, "Execute", {
      sql: "select '{1,NULL,3}'::int[] a, '{}'::text[] b, null::int[] c, 12.50::numeric(5,2) d, '2024-01-15 12:34:56+09'::timestamptz e",
      includeResultMetadata: false,
    });
    expect(answer.status).toBe(200);
    expect(answer.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.text).toBe(
      '{"numberOfRecordsUpdated":0,"records":[[{"arrayValue":{"longValues":[1,null,3]}},{"arrayValue":{"stringValues":[]}},{"isNull":true},{"stringValue":"12.50"},{"stringValue":"2024-01-15 03:34:56"}]]}',
    );
  });

  it("§6.1 and §6.3 selects, §6.4 DML and §6.7 DDL", async () => {
    expect((await call(gw, "Execute", { sql: "select 1 as a, 'ValueOne' as b union all select 2, null" })).text).toBe(
      '{"numberOfRecordsUpdated":0,"records":[[{"longValue":1},{"stringValue":"ValueOne"}],[{"longValue":2},{"isNull":true}]]}',
    );
    expect((await call(gw, "Execute", { sql: "select id from users where false" })).text).toBe('{"numberOfRecordsUpdated":0,"records":[]}');
    expect((await call(gw, "Execute", { sql: "update users set name = :0 where id = :1", parameters: [{ name: "0", value: { stringValue: "John" } }, { name: "1", value: { longValue: 1 } }], includeResultMetadata: true })).text).toBe(
      '{"generatedFields":[],"numberOfRecordsUpdated":1}',
    );
    expect((await call(gw, "Execute", { sql: "create table golden_ddl (x int)" })).text).toBe('{"generatedFields":[],"numberOfRecordsUpdated":0}');
  });

  it("reads 64-bit longValue parameters with every digit, and refuses duplicate names for JSON records without a client-retried error", async () => {
    const response = await fetch(`${gw.baseUrl}/Execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"resourceArn":"${target.resourceArn}","secretArn":"${target.secretArn}","sql":"select :a::int8 + 0 as n","parameters":[{"name":"a","value":{"longValue": 9223372036854775806}}]}`,
    });
    expect(await response.text()).toBe('{"numberOfRecordsUpdated":0,"records":[[{"longValue":9223372036854775806}]]}');
    const duplicate = await call(gw, "Execute", { sql: "select 1 as a, 2 as a", formatRecordsAs: "JSON" });
    expect(duplicate).toMatchObject({ status: 400, errorType: "UnsupportedResultException" });
    expect((await call(gw, "Execute", { sql: "select :a", parameters: [{ name: "a", value: { isNull: false } }] })).errorType).toBe("BadRequestException");
  });

  it("§6.8 result set options", async () => {
    expect((await call(gw, "Execute", { sql: "SELECT 9223372036854775807::int8 AS big", resultSetOptions: { longReturnType: "STRING" } })).text).toBe(
      '{"numberOfRecordsUpdated":0,"records":[[{"stringValue":"9223372036854775807"}]]}',
    );
    // Without STRING the exact digits are written as a JSON number, as the service does.
    expect((await call(gw, "Execute", { sql: "SELECT 9223372036854775807::int8 AS big" })).text).toBe('{"numberOfRecordsUpdated":0,"records":[[{"longValue":9223372036854775807}]]}');
    expect((await call(gw, "Execute", { sql: "SELECT 12.50::numeric(5,2) a, 7::numeric(3,0) b", resultSetOptions: { decimalReturnType: "DOUBLE_OR_LONG" } })).text).toBe(
      '{"numberOfRecordsUpdated":0,"records":[[{"doubleValue":12.5},{"longValue":7}]]}',
    );
  });

  it("§14 formatRecordsAs JSON", async () => {
    expect((await call(gw, "Execute", { sql: "select id, name, created_at from users order by id", formatRecordsAs: "JSON", database: "app" })).text).toBe(
      '{"formattedRecords":"[{\\"id\\":1,\\"name\\":\\"John\\",\\"created_at\\":\\"2024-01-15 03:34:56.123\\"}]","numberOfRecordsUpdated":0}',
    );
  });

  it("§14 kysely select with metadata (documented differences: typeName, tableName, nullable, isAutoIncrement)", async () => {
    const answer = await call(gw, "Execute", {
      sql: 'select "id", "name" as "n" from "users" where "id" = :0',
      parameters: [{ name: "0", value: { longValue: 1 } }],
      database: "app",
      includeResultMetadata: true,
    });
    const body = JSON.parse(answer.text) as { columnMetadata: Record<string, unknown>[]; records: unknown };
    expect(body.records).toEqual([[{ longValue: 1 }, { stringValue: "John" }]]);
    const reference = [
      { arrayBaseColumnType: 0, isAutoIncrement: true, isCaseSensitive: false, isCurrency: false, isSigned: true, label: "id", name: "id", nullable: 0, precision: 10, scale: 0, schemaName: "", tableName: "users", type: 4, typeName: "serial" },
      { arrayBaseColumnType: 0, isAutoIncrement: false, isCaseSensitive: true, isCurrency: false, isSigned: false, label: "n", name: "n", nullable: 1, precision: 2147483647, scale: 0, schemaName: "", tableName: "users", type: 12, typeName: "text" },
    ];
    const differences = { tableName: "", nullable: 2 };
    expect(body.columnMetadata).toEqual([
      { ...reference[0], ...differences, isAutoIncrement: false, typeName: "int4" },
      { ...reference[1], ...differences },
    ]);
    expect(Object.keys(body.columnMetadata[0] ?? {})).toHaveLength(14);
  });

  it("§14 a transaction: begin, insert returning, an error, the aborted next call, rollback, then not found", async () => {
    const begun = await call(gw, "BeginTransaction", { database: "app" });
    const { transactionId } = JSON.parse(begun.text) as { transactionId: string };
    expect(begun.text).toBe(JSON.stringify({ transactionId }));
    const inserted = await call(gw, "Execute", {
      sql: 'insert into "users" ("id", "name", "created_at") values (default, :1, :3) returning "id"',
      parameters: [
        { name: "1", value: { stringValue: "Jane" } },
        { name: "3", value: { stringValue: "2022-01-01 00:00:00.123" }, typeHint: "TIMESTAMP" },
      ],
      transactionId,
      includeResultMetadata: false,
    });
    expect(inserted.text).toBe('{"numberOfRecordsUpdated":0,"records":[[{"longValue":2}]]}');
    const failed = await call(gw, "Execute", { sql: "select * from nope", transactionId });
    expect(failed).toMatchObject({ status: 400, errorType: "DatabaseErrorException" });
    expect(JSON.parse(failed.text)).toEqual({ message: 'ERROR: relation "nope" does not exist; Position: 15; SQLState: 42P01', code: "DatabaseErrorException" });
    const next = await call(gw, "Execute", { sql: "select 1", transactionId });
    expect(JSON.parse(next.text).message).toBe("ERROR: current transaction is aborted, commands ignored until end of transaction block; SQLState: 25P02");
    expect((await call(gw, "RollbackTransaction", { transactionId })).text).toBe('{"transactionStatus":"Rollback Complete"}');
    const later = await call(gw, "CommitTransaction", { transactionId });
    expect(later).toMatchObject({ status: 404, errorType: "TransactionNotFoundException" });
  });

  it("answers bad input in the Data API's own error form, and keeps serving", async () => {
    for (const body of ['{"sql": ', "", "[1,2]"]) {
      const response = await fetch(`${gw.baseUrl}/Execute`, { method: "POST", headers: { "content-type": "application/json" }, body });
      expect(response.status).toBe(400);
      expect(response.headers.get("x-amzn-errortype")).toBe("BadRequestException");
      expect(response.headers.get("x-amzn-requestid")).toBeTruthy();
      expect((await response.json()) as { code: string }).toMatchObject({ code: "BadRequestException" });
    }
    const wrongTypes = await call(gw, "Execute", { sql: 5, parameters: "nope" });
    expect(wrongTypes).toMatchObject({ status: 400, errorType: "BadRequestException" });
    const twoMembers = await call(gw, "Execute", { sql: "select :a", parameters: [{ name: "a", value: { isNull: true, stringValue: "x" } }] });
    expect(twoMembers).toMatchObject({ status: 400, errorType: "BadRequestException" });
    expect((await call(gw, "Execute", { sql: "select 1 as one", unknownMember: true })).text).toBe('{"numberOfRecordsUpdated":0,"records":[[{"longValue":1}]]}');
  });

  it("§14 two statements, and the deprecated ExecuteSql", async () => {
    const several = await call(gw, "Execute", { sql: "select 1; select 2" });
    expect(several).toMatchObject({ status: 400, errorType: "ValidationException" });
    expect(JSON.parse(several.text)).toEqual({ message: "Multistatements aren't supported.", code: "ValidationException" });
    const executeSql = await call(gw, "ExecuteSql", { sqlStatements: "select 1" });
    expect(executeSql).toMatchObject({ status: 400, errorType: "BadRequestException" });
    expect(JSON.parse(executeSql.text).message).toBe("This API is deprecated and not available. Use ExecuteStatement API instead");
    const committed = await call(gw, "BeginTransaction", {});
    const id = (JSON.parse(committed.text) as { transactionId: string }).transactionId;
    expect((await call(gw, "CommitTransaction", { transactionId: id })).text).toBe('{"transactionStatus":"Transaction Committed"}');
  });
});

describe("golden Data API answers on MariaDB", () => {
  let db: TestMysqlDatabase;
  let gw: TestGateway;

  beforeAll(async () => {
    db = await createTestMysqlDatabase();
    gw = await startTestGateway({ clusters: { default: { writerUrl: db.url } } });
    await db.query("create table cats (id int auto_increment primary key, name varchar(100)) auto_increment = 315");
  });

  afterAll(async () => {
    await gw?.stop();
    await db?.drop();
  });

  it("§6.5 insert into an AUTO_INCREMENT table, and update", async () => {
    expect((await call(gw, "Execute", { sql: "INSERT INTO cats (name) VALUES (:name)", parameters: [{ name: "name", value: { stringValue: "Tom" } }] })).text).toBe(
      '{"generatedFields":[{"longValue":315}],"numberOfRecordsUpdated":1}',
    );
    expect((await call(gw, "Execute", { sql: "UPDATE cats SET name = 'Tom' WHERE id = 315" })).text).toBe('{"generatedFields":[],"numberOfRecordsUpdated":1}');
  });

  it("§6.9 / §14 BatchExecute inserts", async () => {
    const answer = await call(gw, "BatchExecute", {
      sql: "INSERT INTO cats (name) VALUES (:name)",
      parameterSets: [[{ name: "name", value: { stringValue: "a" } }], [{ name: "name", value: { stringValue: "b" } }]],
      database: "app",
    });
    expect(answer.text).toBe('{"updateResults":[{"generatedFields":[{"longValue":316}]},{"generatedFields":[{"longValue":317}]}]}');
  });

  it("local-data-api's MySQL scenarios: 1 > 0 is a number, BINARY is a blob, DATETIME without fraction", async () => {
    // The server converts the fraction: MySQL rounds (…:05 in the reference), MariaDB truncates.
    expect((await call(gw, "Execute", { sql: "SELECT 1 > 0 AS value" })).text).toBe('{"numberOfRecordsUpdated":0,"records":[[{"longValue":1}]]}');
    expect((await call(gw, "Execute", { sql: "SELECT BINARY 'hello' AS value" })).text).toBe('{"numberOfRecordsUpdated":0,"records":[[{"blobValue":"aGVsbG8="}]]}');
    expect((await call(gw, "Execute", { sql: "SELECT CAST('2021-03-10 22:41:04.968123' AS DATETIME) AS value" })).text).toBe(
      '{"numberOfRecordsUpdated":0,"records":[[{"stringValue":"2021-03-10 22:41:04"}]]}',
    );
    expect((await call(gw, "Execute", { sql: "SELECT CAST(null AS DATETIME) AS value" })).text).toBe('{"numberOfRecordsUpdated":0,"records":[[{"isNull":true}]]}');
  });

  it("MySQL errors keep the server's text, number and SQLSTATE", async () => {
    const answer = await call(gw, "Execute", { sql: "select * from nope" });
    expect(answer).toMatchObject({ status: 400, errorType: "DatabaseErrorException" });
    expect(JSON.parse(answer.text).message).toMatch(/^Table '.*\.nope' doesn't exist; Error code: 1146; SQLState: 42S02$/);
  });
});
