/**
 * The RDS Data API surface through the unmodified `@aws-sdk/client-rds-data` client, whose `endpoint`
 * points at the gateway: DDL, every supported type in and out, batches, transactions, and each error
 * case by the SDK's exception name. Run over PostgreSQL and MariaDB (data-api-*.test.ts).
 */
import {
  BatchExecuteStatementCommand,
  BeginTransactionCommand,
  CommitTransactionCommand,
  ExecuteStatementCommand,
  type ExecuteStatementCommandInput,
  type Field,
  RDSDataClient,
  RollbackTransactionCommand,
  type SqlParameter,
} from "@aws-sdk/client-rds-data";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayConfigInput } from "../../../gateway/config/schema.js";
import { openTransactions, startTestGateway, type TestGateway } from "../../support/gateway.js";
import { waitFor } from "../../support/wait-for.js";

export const RESOURCE_ARN = "arn:aws:rds:us-east-1:123456789012:cluster:poolgate-test";
export const SECRET_ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:app-AbCdEf";
export const READER_SECRET_ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:reporting-XyZ123";

export interface DataApiTarget {
  engine: "postgres" | "mysql";
  /** Creates the database, and a second database user for the reporting secret. */
  setup(): Promise<{ url: string; readerUser: string; readerPassword: string; cleanup(): Promise<void> }>;
}

/** A client as a Lambda would build it, pointed at the gateway; extra headers through one middleware. */
export function dataApiClient(endpoint: string, headers: Record<string, string> = {}): RDSDataClient {
  const client = new RDSDataClient({ region: "us-east-1", endpoint, credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" }, maxAttempts: 1 });
  if (Object.keys(headers).length > 0) {
    client.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { headers?: Record<string, string> };
        if (request.headers) Object.assign(request.headers, headers);
        return next(args);
      },
      { step: "build", name: "poolgateHeaders" },
    );
  }
  return client;
}

const param = (name: string, value: Field, typeHint?: SqlParameter["typeHint"]): SqlParameter => ({ name, value, ...(typeHint ? { typeHint } : {}) });

async function errorOf(promise: Promise<unknown>): Promise<{ name: string; message: string; status: number | undefined; requestId: string | undefined }> {
  try {
    await promise;
  } catch (err) {
    const e = err as { name: string; message: string; $metadata?: { httpStatusCode?: number; requestId?: string } };
    return { name: e.name, message: e.message, status: e.$metadata?.httpStatusCode, requestId: e.$metadata?.requestId };
  }
  throw new Error("expected the call to fail");
}

export function defineDataApiSuite(target: DataApiTarget): void {
  const pg = target.engine === "postgres";
  describe(`the Data API through @aws-sdk/client-rds-data on ${target.engine}`, () => {
    let gw: TestGateway;
    let client: RDSDataClient;
    let cleanup: () => Promise<void>;
    const base = { resourceArn: RESOURCE_ARN, secretArn: SECRET_ARN };
    const execute = (input: Omit<ExecuteStatementCommandInput, "resourceArn" | "secretArn">, on = client) =>
      on.send(new ExecuteStatementCommand({ ...base, ...input }));

    beforeAll(async () => {
      const setup = await target.setup();
      cleanup = () => setup.cleanup();
      const config: GatewayConfigInput = {
        clusters: { default: { writerUrl: setup.url } },
        pool: { maxSize: 3 },
        dataApi: {
          resources: {
            [RESOURCE_ARN]: {
              cluster: "default",
              secrets: { [SECRET_ARN]: {}, [READER_SECRET_ARN]: { username: setup.readerUser, password: setup.readerPassword } },
            },
          },
          maxResponseBytes: 64 * 1024,
          statementTimeoutMs: 1500,
          transactionIdleTimeoutMs: 2000,
        },
      };
      gw = await startTestGateway(config);
      client = dataApiClient(gw.baseUrl);
    });

    afterAll(async () => {
      client?.destroy();
      await gw?.stop();
      await cleanup?.();
    });

    it("runs DDL, and inserts and selects every supported type with their Field members", async () => {
      const ddl = await execute({
        sql: pg
          ? "create table kinds (id serial primary key, flag bool, small int2, big int8, real4 float4, real8 float8, exact numeric(12,4), note text, code varchar(10), bytes bytea, day date, clock time, at timestamp, atz timestamptz, doc jsonb, uid uuid, nums int[], words text[], nothing text)"
          : "create table kinds (id int auto_increment primary key, flag boolean, small smallint, big bigint, real4 float, real8 double, exact decimal(12,4), note text, code varchar(10), bytes blob, day date, clock time, at datetime(3), atz timestamp(3) null, doc json, mood enum('ok','sad'), yr year, nothing text)",
      });
      expect(ddl).toMatchObject({ numberOfRecordsUpdated: 0, generatedFields: [] });
      const common = [
        param("flag", { booleanValue: true }),
        param("small", { longValue: -7 }),
        param("big", { stringValue: "9007199254740993" }),
        param("real4", { doubleValue: 1.5 }),
        param("real8", { doubleValue: 2.25 }),
        param("exact", { stringValue: "12345678.1234" }, "DECIMAL"),
        param("note", { stringValue: "héllo ✓" }),
        param("code", { stringValue: "A-1" }),
        param("bytes", { blobValue: Buffer.from("hello") }),
        param("day", { stringValue: "2024-02-03" }, "DATE"),
        param("clock", { stringValue: "04:05:06" }, "TIME"),
        param("at", { stringValue: "2024-02-03 04:05:06.789" }, "TIMESTAMP"),
        param("atz", { stringValue: "2024-02-03 04:05:06.789" }, "TIMESTAMP"),
        param("doc", { stringValue: '{"a":[1,"two"]}' }, "JSON"),
        param("nothing", { isNull: true }),
      ];
      const inserted = pg
        ? await execute({
            sql: "insert into kinds (flag, small, big, real4, real8, exact, note, code, bytes, day, clock, at, atz, doc, uid, nums, words, nothing) values (:flag, :small, :big::int8, :real4, :real8, :exact, :note, :code, :bytes, :day, :clock, :at, :atz, :doc, :uid, '{1,NULL,3}', '{}', :nothing)",
            parameters: [...common, param("uid", { stringValue: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11" }, "UUID")],
          })
        : await execute({
            sql: "insert into kinds (flag, small, big, real4, real8, exact, note, code, bytes, day, clock, at, atz, doc, mood, yr, nothing) values (:flag, :small, :big, :real4, :real8, :exact, :note, :code, :bytes, :day, :clock, :at, :atz, :doc, :mood, :yr, :nothing)",
            parameters: [...common, param("mood", { stringValue: "sad" }), param("yr", { longValue: 2024 })],
          });
      expect(inserted.numberOfRecordsUpdated).toBe(1);
      expect(inserted.generatedFields).toEqual(pg ? [] : [{ longValue: 1 }]);

      const selected = await execute({ sql: "select * from kinds", includeResultMetadata: true, resultSetOptions: { longReturnType: "STRING" } });
      const row = Object.fromEntries((selected.columnMetadata ?? []).map((column, i) => [column.label, selected.records?.[0]?.[i]]));
      expect(row).toMatchObject({
        id: { stringValue: "1" },
        flag: { booleanValue: true },
        small: { stringValue: "-7" },
        big: { stringValue: "9007199254740993" },
        real4: { doubleValue: 1.5 },
        real8: { doubleValue: 2.25 },
        exact: { stringValue: "12345678.1234" },
        note: { stringValue: "héllo ✓" },
        code: { stringValue: "A-1" },
        day: { stringValue: "2024-02-03" },
        clock: { stringValue: "04:05:06" },
        at: { stringValue: "2024-02-03 04:05:06.789" },
        atz: { stringValue: "2024-02-03 04:05:06.789" },
        doc: { stringValue: '{"a":[1,"two"]}' },
        nothing: { isNull: true },
      });
      expect(Buffer.from(row.bytes?.blobValue ?? []).toString()).toBe("hello");
      if (pg) {
        expect(row).toMatchObject({
          uid: { stringValue: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11" },
          nums: { arrayValue: { longValues: [1, null, 3] } },
          words: { arrayValue: { stringValues: [] } },
        });
      } else {
        expect(row).toMatchObject({ mood: { stringValue: "sad" }, yr: { stringValue: "2024" } });
      }
      const types = Object.fromEntries((selected.columnMetadata ?? []).map((column) => [column.label, column.typeName]));
      expect(types).toMatchObject(
        pg
          ? { id: "int4", big: "int8", exact: "numeric", atz: "timestamptz", doc: "jsonb", nums: "_int4" }
          : { id: "INT", flag: "BIT", big: "BIGINT", exact: "DECIMAL", at: "DATETIME", atz: "TIMESTAMP", doc: expect.stringMatching(/^(JSON|LONGTEXT|TEXT)$/) },
      );
      // Exact 64-bit integers as longValue (the JSON text has every digit; JavaScript rounds above 2^53).
      const longs = await execute({ sql: pg ? "select 42::int8 as n, 12.50::numeric(5,2) as d" : "select cast(42 as signed) as n, cast(12.50 as decimal(5,2)) as d" });
      expect(longs.records).toEqual([[{ longValue: 42 }, { stringValue: "12.50" }]]);
      const asNumbers = await execute({
        sql: pg ? "select 12.50::numeric(5,2) as a, 7::numeric(3,0) as b" : "select cast(12.50 as decimal(5,2)) as a, cast(7 as decimal(3,0)) as b",
        resultSetOptions: { decimalReturnType: "DOUBLE_OR_LONG" },
      });
      expect(asNumbers.records).toEqual([[{ doubleValue: 12.5 }, { longValue: 7 }]]);
    });

    it("formats records as JSON when asked", async () => {
      const response = await execute({ sql: "select id, note, exact from kinds", formatRecordsAs: "JSON" });
      expect(response.records).toBeUndefined();
      expect(JSON.parse(response.formattedRecords ?? "")).toEqual([{ id: 1, note: "héllo ✓", exact: "12345678.1234" }]);
    });

    if (pg) {
      it("formats each element of an array in JSON records as the same type's scalar", async () => {
        const literals: [type: string, literal: string][] = [
          ["int2", "-7"],
          ["int4", "7"],
          ["int8", "9007199254740993"],
          ["float4", "1.5"],
          ["float8", "-2.25"],
          ["numeric", "12.50"],
          ["bool", "true"],
          ["text", `'a "quoted" word'`],
          ["varchar", "'v'"],
          ["date", "'2024-01-15'"],
          ["time", "'04:05:06.5'"],
          ["timestamp", "'2024-01-15 03:34:56.5'"],
          ["timestamptz", "'2024-01-15 12:34:56.5+09'"],
          ["json", `'{"a": [1, "two"]}'`],
          ["jsonb", `'{"a": [1, "two"]}'`],
          ["uuid", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"],
          ["bytea", "'\\x0102'"],
        ];
        for (const [type, literal] of literals) {
          const sql = `select (${literal})::${type} as s, array[(${literal})::${type}, null] as a`;
          const text = (await execute({ sql, formatRecordsAs: "JSON" })).formattedRecords ?? "";
          // The JSON text itself: a parsed int8 would hide a difference in its digits.
          const [, scalar, element] = /^\[\{"s":(.*),"a":\[(.*),null\]\}\]$/.exec(text) ?? [];
          expect({ type, element }).toEqual({ type, element: scalar });
        }
      });
    }

    it("runs a batch: one statement per parameter set, all or none", async () => {
      await execute({ sql: pg ? "create table names (id serial primary key, name text unique)" : "create table names (id int auto_increment primary key, name varchar(20) unique)" });
      const sets = ["a", "b", "c"].map((name) => [param("name", { stringValue: name })]);
      const batch = await client.send(new BatchExecuteStatementCommand({ ...base, sql: "insert into names (name) values (:name)", parameterSets: sets }));
      expect(batch.updateResults).toEqual(pg ? [{ generatedFields: [] }, { generatedFields: [] }, { generatedFields: [] }] : [1, 2, 3].map((id) => ({ generatedFields: [{ longValue: id }] })));
      const failing = await errorOf(
        client.send(new BatchExecuteStatementCommand({ ...base, sql: "insert into names (name) values (:name)", parameterSets: [[param("name", { stringValue: "d" })], [param("name", { stringValue: "a" })]] })),
      );
      expect(failing.name).toBe("DatabaseErrorException");
      expect((await execute({ sql: "select count(*) as n from names" })).records).toEqual([[{ longValue: 3 }]]);
      expect((await client.send(new BatchExecuteStatementCommand({ ...base, sql: "insert into names (name) values (:name)" }))).updateResults).toEqual([]);
    });

    it("commits and rolls back transactions, which stay usable after a SQL error until they end", async () => {
      const committed = await client.send(new BeginTransactionCommand(base));
      const transactionId = committed.transactionId as string;
      expect(transactionId.length).toBeGreaterThan(0);
      await execute({ sql: "insert into names (name) values (:name)", parameters: [param("name", { stringValue: "tx-commit" })], transactionId });
      expect((await execute({ sql: "select count(*) as n from names where name = 'tx-commit'" })).records).toEqual([[{ longValue: 0 }]]);
      expect((await client.send(new CommitTransactionCommand({ ...base, transactionId }))).transactionStatus).toBe("Transaction Committed");
      expect((await execute({ sql: "select count(*) as n from names where name = 'tx-commit'" })).records).toEqual([[{ longValue: 1 }]]);

      const rolled = (await client.send(new BeginTransactionCommand(base))).transactionId as string;
      await execute({ sql: "insert into names (name) values ('tx-rollback')", transactionId: rolled });
      const failed = await errorOf(execute({ sql: "select * from no_such_table", transactionId: rolled }));
      expect(failed.name).toBe("DatabaseErrorException");
      const next = execute({ sql: "select 1 as one", transactionId: rolled });
      if (pg) expect((await errorOf(next)).message).toContain("25P02");
      else expect((await next).records).toEqual([[{ longValue: 1 }]]);
      expect((await client.send(new RollbackTransactionCommand({ ...base, transactionId: rolled }))).transactionStatus).toBe("Rollback Complete");
      expect((await execute({ sql: "select count(*) as n from names where name = 'tx-rollback'" })).records).toEqual([[{ longValue: 0 }]]);
      const again = await errorOf(client.send(new CommitTransactionCommand({ ...base, transactionId: rolled })));
      expect(again).toMatchObject({ name: "TransactionNotFoundException", status: 404 });
    });

    it("runs COMMIT and ROLLBACK sent as SQL in a transaction, which goes on in a new one until CommitTransaction", async () => {
      const transactionId = (await client.send(new BeginTransactionCommand(base))).transactionId as string;
      const insert = (name: string) => execute({ sql: "insert into names (name) values (:name)", parameters: [param("name", { stringValue: name })], transactionId });
      const count = async (name: string) => (await execute({ sql: "select count(*) as n from names where name = :name", parameters: [param("name", { stringValue: name })] })).records;
      await insert("sql-commit-1");
      expect(await execute({ sql: "COMMIT", transactionId })).toMatchObject({ numberOfRecordsUpdated: 0 });
      expect(await count("sql-commit-1")).toEqual([[{ longValue: 1 }]]);
      // The statements after it run in a transaction again: nothing is seen outside until it ends.
      await insert("sql-commit-2");
      expect(await count("sql-commit-2")).toEqual([[{ longValue: 0 }]]);
      await execute({ sql: "rollback", transactionId });
      await insert("sql-commit-3");
      // BEGIN inside a transaction is the database's: a warning on PostgreSQL, an implicit commit on MySQL.
      await execute({ sql: pg ? "begin" : "start transaction", transactionId });
      await insert("sql-commit-4");
      expect(await count("sql-commit-4")).toEqual([[{ longValue: 0 }]]);
      expect((await client.send(new CommitTransactionCommand({ ...base, transactionId }))).transactionStatus).toBe("Transaction Committed");
      expect(await count("sql-commit-2")).toEqual([[{ longValue: 0 }]]);
      for (const name of ["sql-commit-3", "sql-commit-4"]) expect(await count(name)).toEqual([[{ longValue: 1 }]]);
      expect((await errorOf(execute({ sql: "select 1", transactionId }))).name).toBe("TransactionNotFoundException");

      // ROLLBACK as SQL, then RollbackTransaction: the rest is rolled back, the id ends.
      const rolled = (await client.send(new BeginTransactionCommand(base))).transactionId as string;
      await execute({ sql: "insert into names (name) values ('sql-rollback')", transactionId: rolled });
      await execute({ sql: "ROLLBACK", transactionId: rolled });
      expect((await client.send(new RollbackTransactionCommand({ ...base, transactionId: rolled }))).transactionStatus).toBe("Rollback Complete");
      expect(await count("sql-rollback")).toEqual([[{ longValue: 0 }]]);
      expect(openTransactions(gw)).toBe(0);
    });

    it("never answers COMMIT sent as SQL as a success when it rolled back a transaction a statement failed in", async () => {
      const transactionId = (await client.send(new BeginTransactionCommand(base))).transactionId as string;
      await execute({ sql: "insert into names (name) values ('commit-after-fail')", transactionId });
      expect((await errorOf(execute({ sql: "select * from no_such_table", transactionId }))).name).toBe("DatabaseErrorException");
      const commit = execute({ sql: "COMMIT", transactionId });
      // PostgreSQL answers such a COMMIT with ROLLBACK; MySQL commits the statements that succeeded.
      if (pg) expect((await errorOf(commit)).message).toContain("COMMIT rolled the transaction back");
      else expect(await commit).toMatchObject({ numberOfRecordsUpdated: 0 });
      const count = await execute({ sql: "select count(*) as n from names where name = 'commit-after-fail'" });
      expect(count.records).toEqual([[{ longValue: pg ? 0 : 1 }]]);
      // The id stays usable, as after any failed statement: the caller's RollbackTransaction succeeds.
      expect((await client.send(new RollbackTransactionCommand({ ...base, transactionId }))).transactionStatus).toBe("Rollback Complete");
      expect(openTransactions(gw)).toBe(0);
    });

    it("answers text the gateway cannot read with the database's own error, in and out of transactions and batches", async () => {
      // PostgreSQL's grammar refuses the first; MySQL's lexer cannot end the second's string.
      const unreadable = pg ? "selec 1 as one" : "select 'unterminated as one";
      expect((await errorOf(execute({ sql: unreadable }))).name).toBe("DatabaseErrorException");
      const transactionId = (await client.send(new BeginTransactionCommand(base))).transactionId as string;
      expect((await errorOf(execute({ sql: unreadable, transactionId }))).name).toBe("DatabaseErrorException");
      expect((await errorOf(client.send(new BatchExecuteStatementCommand({ ...base, sql: unreadable, parameterSets: [[]], transactionId })))).name).toBe(
        "DatabaseErrorException",
      );
      await client.send(new RollbackTransactionCommand({ ...base, transactionId }));
      expect((await errorOf(client.send(new BatchExecuteStatementCommand({ ...base, sql: unreadable, parameterSets: [[], []] })))).name).toBe("DatabaseErrorException");
      expect((await execute({ sql: "select 1 as one" })).records).toEqual([[{ longValue: 1 }]]);
    });

    it("queues concurrent calls on one transaction in order instead of refusing them", async () => {
      const transactionId = (await client.send(new BeginTransactionCommand(base))).transactionId as string;
      const names = Array.from({ length: 6 }, (_, i) => `queued-${i}`);
      await Promise.all(names.map((name) => execute({ sql: "insert into names (name) values (:name)", parameters: [param("name", { stringValue: name })], transactionId })));
      await client.send(new CommitTransactionCommand({ ...base, transactionId }));
      const rows = await execute({ sql: "select name from names where name like 'queued-%' order by name" });
      expect(rows.records?.map((record) => record[0]?.stringValue)).toEqual(names);
    });

    it("rolls back a transaction left idle, whose id is then not found", async () => {
      const transactionId = (await client.send(new BeginTransactionCommand(base))).transactionId as string;
      await execute({ sql: "insert into names (name) values ('tx-idle')", transactionId });
      // Idle 2 s, then swept; watched from outside, as a call in between would keep it alive.
      await waitFor(() => openTransactions(gw) === 0, 10000, "the idle transaction to be rolled back");
      expect((await errorOf(execute({ sql: "select 1", transactionId }))).name).toBe("TransactionNotFoundException");
      expect((await execute({ sql: "select count(*) as n from names where name = 'tx-idle'" })).records).toEqual([[{ longValue: 0 }]]);
    });

    it("reaches the database as the user a secret stands for", async () => {
      const sql = pg ? "select current_user as who" : "select substring_index(current_user(), '@', 1) as who";
      const reporting = await client.send(new ExecuteStatementCommand({ resourceArn: RESOURCE_ARN, secretArn: READER_SECRET_ARN, sql }));
      const own = await execute({ sql });
      expect(reporting.records?.[0]?.[0]?.stringValue).not.toBe(own.records?.[0]?.[0]?.stringValue);
    });

    it("answers each error with the exception name the SDK expects, and a request id", async () => {
      const database = await errorOf(execute({ sql: "select * from no_such_table" }));
      expect(database).toMatchObject({ name: "DatabaseErrorException", status: 400 });
      expect(database.message).toMatch(pg ? /^ERROR: relation "no_such_table" does not exist; Position: 15; SQLState: 42P01$/ : /doesn't exist; Error code: 1146; SQLState: 42S02$/);
      expect(database.requestId).toMatch(/^[0-9a-f-]{36}$/);

      const timeout = await errorOf(execute({ sql: pg ? "select pg_sleep(5)" : "select sleep(5)" }));
      expect(timeout).toMatchObject({ name: "StatementTimeoutException", status: 400 });

      const notFound = await errorOf(execute({ sql: "select 1", transactionId: "no-such-transaction" }));
      expect(notFound).toMatchObject({ name: "TransactionNotFoundException", status: 404 });

      const forbidden = await errorOf(client.send(new ExecuteStatementCommand({ resourceArn: RESOURCE_ARN, secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:other", sql: "select 1" })));
      expect(forbidden).toMatchObject({ name: "ForbiddenException", status: 403 });

      const unknownResource = await errorOf(client.send(new ExecuteStatementCommand({ resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:other", secretArn: SECRET_ARN, sql: "select 1" })));
      expect(unknownResource.name).toBe("HttpEndpointNotEnabledException");

      const several = await errorOf(execute({ sql: "select 1; select 2" }));
      expect(several).toMatchObject({ name: "ValidationException", message: "Multistatements aren't supported." });

      const array = await errorOf(execute({ sql: "select :a", parameters: [param("a", { arrayValue: { longValues: [1, 2] } })] }));
      expect(array).toMatchObject({ name: "BadRequestException", message: "Array parameters are not supported." });

      const missing = await errorOf(execute({ sql: "select :a" }));
      expect(missing.name).toBe("BadRequestException");

      const invalid = await errorOf(client.send(new ExecuteStatementCommand({ ...base } as ExecuteStatementCommandInput)));
      expect(invalid).toMatchObject({ name: "BadRequestException", status: 400 });

      const tooLarge = await errorOf(execute({ sql: pg ? "select repeat('x', 100000) as big" : "select repeat('x', 100000) as big" }));
      expect(tooLarge.name).toBe("UnsupportedResultException");
      // Nothing is left behind: the next call works on the same pool.
      expect((await execute({ sql: "select 1 as one" })).records).toEqual([[{ longValue: 1 }]]);
    });

    it("goes beyond the Data API only when asked: array parameters and large results", async () => {
      const extended = dataApiClient(gw.baseUrl, { "x-poolgate-extensions": "array-parameters,large-results" });
      try {
        const big = await execute({ sql: "select repeat('x', 100000) as big" }, extended);
        expect(big.records?.[0]?.[0]?.stringValue?.length).toBe(100000);
        const arrays = await execute(
          { sql: pg ? "select cardinality(:a::int[]) as n" : "select json_length(:a) as n", parameters: [param("a", { arrayValue: { longValues: [1, 2, 3] } })] },
          extended,
        );
        expect(arrays.records).toEqual([[{ longValue: 3 }]]);
      } finally {
        extended.destroy();
      }
    });
  });
}
