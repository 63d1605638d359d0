/**
 * Real-MariaDB/MySQL harness: every test file gets its own database on the local server
 * (127.0.0.1:3306, root with an empty password), dropped afterwards, so files run in parallel. A
 * missing server is a failure, never a skip.
 */
import { randomBytes } from "node:crypto";
import mysql from "mysql2/promise";

export const MYSQL_ADMIN_URL = process.env.POOLGATE_TEST_MYSQL_URL ?? "mysql://root@127.0.0.1:3306/test";

export interface TestMysqlDatabase {
  name: string;
  url: string;
  /** A direct session with no default database (so it never counts as the gateway's), for setup and checks. */
  admin: mysql.Connection;
  /** Runs SQL on the test database through the admin session. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

export async function createTestMysqlDatabase(): Promise<TestMysqlDatabase> {
  const base = new URL(MYSQL_ADMIN_URL);
  let admin: mysql.Connection;
  try {
    admin = await mysql.createConnection({
      host: base.hostname,
      port: Number(base.port || 3306),
      user: decodeURIComponent(base.username) || "root",
      password: decodeURIComponent(base.password),
      multipleStatements: true,
      supportBigNumbers: true,
    });
  } catch (err) {
    throw new Error(`these tests need the local MariaDB/MySQL at ${MYSQL_ADMIN_URL}; it is not reachable: ${(err as Error).message}`);
  }
  const name = `poolgate_test_${randomBytes(5).toString("hex")}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(MYSQL_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    admin,
    query: async <T>(sql: string, params: unknown[] = []) => {
      const [rows] = await admin.query(`USE ${name}`).then(() => admin.query(sql, params));
      return rows as T[];
    },
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name}`);
      await admin.end();
    },
  };
}

/** The gateway's sessions on the test database: every session there that is not the admin's. */
export async function mysqlGatewaySessions(db: TestMysqlDatabase): Promise<{ id: number; command: string; info: string | null }[]> {
  const [rows] = await db.admin.query(
    "SELECT ID AS id, COMMAND AS command, INFO AS info FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID() ORDER BY ID",
    [db.name],
  );
  return rows as { id: number; command: string; info: string | null }[];
}
