/**
 * A read-only principal cannot write, on either engine and either surface, however its SQL would be
 * classified: plain writes, SELECTs of functions that write, a function that escapes READ ONLY
 * before writing (its write is rolled back), several statements in one string, statements that
 * change the access mode, implicit commits and procedures (MySQL), batches and interactive
 * transactions. A read-write principal on the same cluster is the control.
 */
import { BatchExecuteStatementCommand, BeginTransactionCommand, CommitTransactionCommand, ExecuteStatementCommand, type RDSDataClient } from "@aws-sdk/client-rds-data";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, type TokensFile, writeTokensFile } from "../../support/bearer-tokens.js";
import { bearerAuth, dataApiClient } from "../../support/data-api-client.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createTestMysqlDatabase } from "../../support/mysql.js";
import { createTestDatabase } from "../../support/postgres.js";

const TOKENS = { reader: "reader-token-0123456789abcdef01234", writer: "writer-token-0123456789abcdef01234" };
const reader = bearer(TOKENS.reader);
const writer = bearer(TOKENS.writer);
const ARNS = { resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:app", secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:app" };

interface Target {
  name: string;
  engine: "postgres" | "mysql";
  /** Creates the ledger table and the routines, returns the cluster URL, a row counter and a cleanup. */
  setup(): Promise<{ url: string; ledgerRows(): Promise<number>; tableExists(name: string): Promise<boolean>; cleanup(): Promise<void> }>;
}

const POSTGRES: Target = {
  name: "PostgreSQL",
  engine: "postgres",
  async setup() {
    const db = await createTestDatabase();
    await db.admin.query("create table ledger (id serial primary key, note text)");
    await db.admin.query("create function add_entry() returns int language sql as $$ insert into ledger (note) values ('fn') returning id $$");
    // Trusted code that escapes READ ONLY before writing: only the final ROLLBACK stops it.
    await db.admin.query(
      "create function escape_and_write() returns int language plpgsql as $$ begin reset transaction_read_only; insert into ledger (note) values ('escaped'); return 1; end $$",
    );
    return {
      url: db.url,
      ledgerRows: async () => Number((await db.admin.query<{ n: string }>("select count(*) as n from ledger")).rows[0]?.n),
      tableExists: async (name) => (await db.admin.query("select 1 from pg_tables where tablename = $1", [name])).rowCount === 1,
      cleanup: () => db.drop(),
    };
  },
};

const MYSQL: Target = {
  name: "MariaDB",
  engine: "mysql",
  async setup() {
    const db = await createTestMysqlDatabase();
    await db.query("create table ledger (id int auto_increment primary key, note text)");
    await db.query("create function add_entry() returns int modifies sql data begin insert into ledger (note) values ('fn'); return last_insert_id(); end");
    await db.query("create procedure make_table() begin create table made_by_proc (x int); end");
    return {
      url: db.url,
      ledgerRows: async () => Number((await db.query<{ n: number }>("select count(*) as n from ledger"))[0]?.n),
      tableExists: async (name) => (await db.query("select 1 from information_schema.tables where table_schema = ? and table_name = ?", [db.name, name])).length === 1,
      cleanup: () => db.drop(),
    };
  },
};

const dataApi = (gateway: TestGateway, token: string): RDSDataClient => dataApiClient(gateway.baseUrl, { auth: bearerAuth(token) });

for (const target of [POSTGRES, MYSQL]) {
  describe(`a read-only principal on ${target.name}`, () => {
    let gateway: TestGateway;
    let env: Awaited<ReturnType<Target["setup"]>>;
    let tokens: TokensFile;
    const insert = "insert into ledger (note) values ('direct')";

    beforeAll(async () => {
      env = await target.setup();
      tokens = writeTokensFile(TOKENS);
      gateway = await startTestGateway({
        clusters: { default: { writerUrl: env.url } },
        pool: { maxSize: 3 },
        auth: { bearer: { tokensFile: tokens.path }, principals: { reader: { clusters: { default: "read-only" } }, writer: { clusters: { default: "read-write" } } } },
      });
    });

    afterAll(async () => {
      await gateway?.stop();
      await env?.cleanup();
      tokens?.remove();
    });

    it("reads", async () => {
      const answer = await gateway.post("/v1/query", { sql: "select count(*) as n from ledger" }, reader);
      expect(answer.status).toBe(200);
      expect((await dataApi(gateway, TOKENS.reader).send(new ExecuteStatementCommand({ ...ARNS, sql: "select 1" }))).records).toHaveLength(1);
    });

    it("cannot write directly: only statements known to read are sent, and the answer is FORBIDDEN", async () => {
      const answer = await gateway.post("/v1/query", { sql: insert }, reader);
      expect(answer.status).toBe(403);
      expect(answer.body.error.code).toBe("FORBIDDEN");
      expect(answer.body.error.message).toContain("INSERT statements");
      // The same statement classified as a read, by the caller's own hint, is refused just the same.
      expect((await gateway.post("/v1/query", { sql: insert, intent: "read" }, reader)).status).toBe(403);
      expect(await env.ledgerRows()).toBe(0);
    });

    it("cannot write through a SELECT of a function that writes", async () => {
      const answer = await gateway.post("/v1/query", { sql: "select add_entry()" }, reader);
      expect(answer.status).toBe(403);
      expect(answer.body.error.database.sqlstate).toBe("25006");
      expect(await env.ledgerRows()).toBe(0);
    });

    it("cannot smuggle a second statement into one string", async () => {
      const answer = await gateway.post("/v1/query", { sql: `select 1; ${insert}` }, reader);
      expect(answer.status).toBe(403);
      expect(answer.body.error.code).toBe("FORBIDDEN");
      // Two reads in one string: the reader allows them, the server refuses to run them as one statement.
      const twoReads = await gateway.post("/v1/query", { sql: "select 1; select 2" }, reader);
      expect(twoReads.status).toBe(400);
      expect(twoReads.body.error.code).toBe("DATABASE_ERROR");
      expect(await env.ledgerRows()).toBe(0);
    });

    it("is refused statements that could end its transaction or change its access mode", async () => {
      const refused = ["commit", "set transaction read write", "set session transaction read write", "reset transaction_read_only"];
      // txid_current and pg_current_xact_id are STABLE in pg_proc, yet each assigns the transaction an id.
      if (target.engine === "postgres") refused.push("do $$ begin insert into ledger (note) values ('do'); end $$", "select txid_current()", "select pg_current_xact_id() as x");
      if (target.engine === "mysql") refused.push("create table made_directly (x int)", "/*!50000 set @@session.tx_read_only = 0 */");
      for (const sql of refused) {
        const answer = await gateway.post("/v1/query", { sql }, reader);
        expect(answer.status, sql).toBe(403);
        expect(answer.body.error.code, sql).toBe("FORBIDDEN");
      }
      expect(await env.ledgerRows()).toBe(0);
    });

    if (target.engine === "postgres") {
      it("keeps nothing even from trusted code that escapes READ ONLY: its transaction ends in ROLLBACK", async () => {
        const answer = await gateway.post("/v1/query", { sql: "select escape_and_write() as wrote" }, reader);
        expect(answer.status).toBe(200);
        expect(answer.body.rows).toEqual([{ wrote: 1 }]);
        expect(await env.ledgerRows()).toBe(0);
      });
    }

    if (target.engine === "mysql") {
      it("cannot call a procedure that creates a table, and the session stays read-write for others", async () => {
        const answer = await gateway.post("/v1/query", { sql: "call make_table()" }, reader);
        expect(answer.status).toBe(403);
        expect(answer.body.error.message).toContain("CALL statements");
        expect(await env.tableExists("made_by_proc")).toBe(false);
        // The session it used went back to the pool reset: the writer can still write on it.
        for (let i = 0; i < 3; i++) expect((await gateway.post("/v1/query", { sql: "select @@session.tx_read_only as ro" }, writer)).body.rows).toEqual([{ ro: "0" }]);
      });
    }

    it("cannot write in a batch, and nothing of the batch stays", async () => {
      const answer = await gateway.post("/v1/batch", { statements: [{ sql: "select 1" }, { sql: insert }] }, reader);
      expect(answer.status).toBe(403);
      expect(await env.ledgerRows()).toBe(0);
    });

    it("cannot write in an interactive transaction, and its commit persists nothing", async () => {
      const begun = await gateway.post("/v1/transactions", {}, reader);
      expect(begun.status).toBe(201);
      const id = begun.body.transactionId as string;
      const write = await gateway.post("/v1/query", { sql: insert, transactionId: id }, reader);
      expect(write.status).toBe(403);
      if (target.engine === "postgres") {
        // A failed statement aborts a PostgreSQL transaction: start another for the escape.
        await gateway.post(`/v1/transactions/${id}/rollback`, undefined, reader);
        const second = (await gateway.post("/v1/transactions", {}, reader)).body.transactionId as string;
        expect((await gateway.post("/v1/query", { sql: "select escape_and_write()", transactionId: second }, reader)).status).toBe(200);
        expect((await gateway.post(`/v1/transactions/${second}/commit`, undefined, reader)).body.outcome).toBe("committed");
      } else {
        expect((await gateway.post("/v1/query", { sql: "select 1", transactionId: id }, reader)).status).toBe(200);
        expect((await gateway.post(`/v1/transactions/${id}/commit`, undefined, reader)).body.outcome).toBe("committed");
      }
      expect(await env.ledgerRows()).toBe(0);
    });

    it("cannot write through the Data API either", async () => {
      const client = dataApi(gateway, TOKENS.reader);
      await expect(client.send(new ExecuteStatementCommand({ ...ARNS, sql: insert }))).rejects.toMatchObject({ name: "AccessDeniedException" });
      await expect(client.send(new BatchExecuteStatementCommand({ ...ARNS, sql: insert, parameterSets: [[], []] }))).rejects.toMatchObject({
        name: "AccessDeniedException",
      });
      const { transactionId } = await client.send(new BeginTransactionCommand(ARNS));
      await expect(client.send(new ExecuteStatementCommand({ ...ARNS, sql: "select add_entry()", transactionId }))).rejects.toMatchObject({
        name: "AccessDeniedException",
        message: expect.stringContaining("was rolled back and closed"),
      });
      // The refused write ended its transaction at once: nothing it locked stays locked.
      await expect(client.send(new CommitTransactionCommand({ ...ARNS, transactionId }))).rejects.toMatchObject({
        name: "DatabaseErrorException",
        message: expect.stringContaining("rolled back by the gateway: the database refused a write of this read-only principal"),
      });
      expect(await env.ledgerRows()).toBe(0);
    });

    it("leaves the read-write principal able to write on the same cluster (the control)", async () => {
      expect((await gateway.post("/v1/query", { sql: insert }, writer)).status).toBe(200);
      expect((await gateway.post("/v1/query", { sql: "select add_entry()" }, writer)).status).toBe(200);
      expect(await env.ledgerRows()).toBe(2);
    });
  });
}
