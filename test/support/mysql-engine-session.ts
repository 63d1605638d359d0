/**
 * One MySQL engine session on a test database of its own, for tests of the engine itself (below the
 * pool and HTTP): opened before the enclosing describe block's tests, with its setup statements run,
 * and closed (the database dropped) after them. Call it inside the describe block.
 */
import { afterAll, beforeAll } from "vitest";
import type { Engine, EngineConnection, EngineStatement, ExecuteOptions } from "../../gateway/engines/engine.js";
import type { Param } from "../../schemas/query.js";
import { engineForUrl } from "../../gateway/engines/engine-for-url.js";
import { createTestMysqlDatabase, type TestMysqlDatabase } from "./mysql.js";

/** Options for statements of these tests: exact big numbers, room for any small result. */
export const ENGINE_TEST_OPTIONS: ExecuteOptions = { timeoutMs: 20000, bigNumbers: "string", maxResultBytes: 1 << 20, maxResultRows: 1000 };

export interface MysqlEngineSession {
  readonly connection: EngineConnection;
  /** A statement of `sql` as the session's engine makes it (autocommit, as written). */
  statement(sql: string, params?: readonly Param[]): EngineStatement;
  readonly db: TestMysqlDatabase;
}

export function useMysqlEngineSession(setup: readonly string[] = []): MysqlEngineSession {
  let db: TestMysqlDatabase | undefined;
  let connection: EngineConnection | undefined;
  let engine: Engine | undefined;
  beforeAll(async () => {
    db = await createTestMysqlDatabase();
    engine = engineForUrl(db.url, { preparedCacheSize: 8, cancelGraceMs: 5000, writingFunctions: [] });
    connection = await engine.connect({ url: db.url }, 10000);
    for (const sql of setup) await connection.execute(engine.statement(sql), ENGINE_TEST_OPTIONS);
  });
  afterAll(async () => {
    await connection?.close();
    await db?.drop();
  });
  const opened = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the MySQL engine session is opened in beforeAll: use it inside a test");
    return value;
  };
  return {
    statement: (sql, params) => opened(engine).statement(sql, params),
    get connection() {
      return opened(connection);
    },
    get db() {
      return opened(db);
    },
  };
}
