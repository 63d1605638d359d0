/** The role check on a server that refuses the WAL-position functions still reports the role. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresEngine } from "../../../gateway/engines/postgres/engine.js";
import { createTestDatabase, type TestDatabase } from "../../support/postgres.js";

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  const role = `${db.name}_app`;
  await db.admin.query(`CREATE ROLE ${role} LOGIN`);
  // Function privileges live in this database's catalog, so other databases are unaffected.
  await db.admin.query("REVOKE EXECUTE ON FUNCTION pg_current_wal_lsn() FROM PUBLIC");
});

afterAll(async () => {
  await db.admin.query(`DROP OWNED BY ${db.name}_app`).catch(() => undefined);
  await db.drop();
  await dropRole(`${db.name}_app`);
});

async function dropRole(role: string): Promise<void> {
  const { default: pg } = await import("pg");
  const admin = new pg.Client({ connectionString: "postgres://postgres@127.0.0.1:5432/test" });
  await admin.connect();
  await admin.query(`DROP ROLE IF EXISTS ${role}`);
  await admin.end();
}

describe("instance inspection", () => {
  it("reports role and position, and only the role where positions are refused", async () => {
    const engine = new PostgresEngine({ preparedCacheSize: 4, cancelGraceMs: 500 });
    const full = await engine.connect({ url: db.url }, 2000);
    const state = await full.inspect(2000);
    expect(state.role).toBe("primary");
    expect(engine.isPosition(state.position ?? "")).toBe(true);
    await full.close();

    const restrictedUrl = new URL(db.url);
    restrictedUrl.username = `${db.name}_app`;
    const restricted = await engine.connect({ url: restrictedUrl.toString() }, 2000);
    // The refusal is reported as what it is (its SQLSTATE), not only as a missing position.
    expect(await restricted.inspect(2000)).toEqual({
      role: "primary",
      position: null,
      replayAgeMs: null,
      positionsRefused: { sqlstate: "42501", message: "permission denied for function pg_current_wal_lsn" },
    });
    await restricted.close();
  });
});
