/**
 * Real-PostgreSQL harness: every test file gets its own database on the local server
 * (127.0.0.1:5432, trust auth), dropped afterwards, so files run in parallel. A missing server is a
 * failure, never a skip.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";

export const ADMIN_URL = process.env.POOLGATE_TEST_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export interface TestDatabase {
  name: string;
  url: string;
  /** A direct client (not through the gateway) for setup and for checking what reached the server. */
  admin: pg.Client;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(`these tests need the local PostgreSQL at ${ADMIN_URL} (trust auth); it is not reachable: ${(err as Error).message}`);
  }
  const name = `poolgate_test_${randomBytes(5).toString("hex")}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const direct = new pg.Client({ connectionString: url.toString() });
  await direct.connect();
  return {
    name,
    url: url.toString(),
    admin: direct,
    drop: async () => {
      await direct.end().catch(() => undefined);
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** Sessions the gateway holds on the database (application_name = poolgate). */
export async function gatewaySessions(db: TestDatabase): Promise<{ pid: number; state: string; query: string }[]> {
  const { rows } = await db.admin.query(
    "SELECT pid, state, query FROM pg_stat_activity WHERE datname = $1 AND application_name = 'poolgate' ORDER BY pid",
    [db.name],
  );
  return rows;
}
