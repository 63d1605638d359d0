/**
 * The credentials suite (database-credentials-suite.ts) on the real local MariaDB: a user made for the
 * run (dropped after). MariaDB here has no TLS (have_ssl DISABLED), so TLS and IAM's cleartext plugin
 * are covered by gateway/engines/mysql/engine.test.ts instead.
 */
import { afterAll, beforeAll, vi } from "vitest";
import { createTestMysqlDatabase } from "../../support/mysql.js";
import { defineCredentialsSuite } from "./database-credentials-suite.js";

beforeAll(() => {
  // The SDK signs every call: dummy credentials from the environment (the stand-in checks no signature).
  vi.stubEnv("AWS_ACCESS_KEY_ID", "AKIAPOOLGATETEST0002");
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", "poolgate-test-secret-access-key-0000000");
  vi.stubEnv("AWS_REGION", "us-east-1");
  vi.stubEnv("AWS_EC2_METADATA_DISABLED", "true");
});

afterAll(() => {
  vi.unstubAllEnvs();
});

defineCredentialsSuite({
  name: "the local MariaDB server (MySQL engine)",
  engine: "mysql",
  async start(user, password) {
    const db = await createTestMysqlDatabase();
    await db.admin.query(`CREATE USER '${user}'@'%' IDENTIFIED BY '${password}'`);
    await db.admin.query(`GRANT ALL ON \`${db.name}\`.* TO '${user}'@'%'`);
    // The gateway's idempotency record, in a database of its own (the server's, shared by every test).
    await db.admin.query(`GRANT ALL ON poolgate_internal.* TO '${user}'@'%'`);
    // The URL's user and password are wrong on purpose: the secret's must win.
    const url = new URL(db.url);
    url.username = "not-this-user";
    url.password = "not-this-password";
    return {
      url: url.toString(),
      setPassword: async (next) => void (await db.admin.query(`ALTER USER '${user}'@'%' IDENTIFIED BY '${next}'`)),
      running: async (marker) => {
        const [rows] = await db.admin.query("select count(*) as n from information_schema.PROCESSLIST where INFO like ? and ID <> CONNECTION_ID()", [`%${marker}%`]);
        return Number((rows as { n: number }[])[0]?.n);
      },
      close: async () => {
        await db.admin.query(`DROP USER IF EXISTS '${user}'@'%'`);
        await db.drop();
      },
    };
  },
  whoAmI: { sql: "select current_user() as who", expected: (user) => `${user}@%` },
  sleep: (seconds, marker) => `select sleep(${seconds}) /* ${marker} */`,
});
