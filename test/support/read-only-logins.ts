/**
 * Database logins that the database itself limits to reading, as the README tells operators to
 * create them: PostgreSQL a role with pg_read_all_data, MySQL/MariaDB a user with SELECT only. Each
 * is created for one test database and dropped with it.
 */
import type { TestMysqlDatabase } from "./mysql.js";
import type { TestDatabase } from "./postgres.js";

export interface ReadOnlyLogin {
  username: string;
  password: string;
  drop(): Promise<void>;
}

const PASSWORD = "read-only-password-1";

/** A PostgreSQL role that may log in and read everything (pg_read_all_data), and nothing more. */
export async function createPostgresReadOnlyLogin(db: TestDatabase): Promise<ReadOnlyLogin> {
  const username = `${db.name}_ro`;
  await db.admin.query(`CREATE ROLE ${username} LOGIN PASSWORD '${PASSWORD}'`);
  await db.admin.query(`GRANT pg_read_all_data TO ${username}`);
  await db.admin.query(`GRANT CONNECT ON DATABASE ${db.name} TO ${username}`);
  return {
    username,
    password: PASSWORD,
    // Roles belong to the server: dropped once the database (which holds its grants) is gone.
    drop: async () => {
      await db.drop();
      const { default: pg } = await import("pg");
      const { ADMIN_URL } = await import("./postgres.js");
      const admin = new pg.Client({ connectionString: ADMIN_URL });
      await admin.connect();
      try {
        await admin.query(`DROP ROLE IF EXISTS ${username}`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** A MySQL/MariaDB user with SELECT on the test database only. */
export async function createMysqlReadOnlyLogin(db: TestMysqlDatabase): Promise<ReadOnlyLogin> {
  const username = `${db.name.slice(-10)}_ro`;
  for (const host of ["%", "localhost"]) {
    await db.admin.query(`CREATE USER '${username}'@'${host}' IDENTIFIED BY '${PASSWORD}'`);
    await db.admin.query(`GRANT SELECT ON \`${db.name}\`.* TO '${username}'@'${host}'`);
  }
  return {
    username,
    password: PASSWORD,
    drop: async () => {
      for (const host of ["%", "localhost"]) await db.admin.query(`DROP USER IF EXISTS '${username}'@'${host}'`);
      await db.drop();
    },
  };
}
