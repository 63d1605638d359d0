import { randomBytes } from "node:crypto";
import { createTestMysqlDatabase } from "../support/mysql.js";
import { defineDataApiSuite } from "./data-api-suite.js";

defineDataApiSuite({
  engine: "mysql",
  async setup() {
    const db = await createTestMysqlDatabase();
    const readerUser = `rep_${randomBytes(4).toString("hex")}`;
    await db.admin.query(`CREATE USER '${readerUser}'@'%' IDENTIFIED BY 'reporting-password'`);
    await db.admin.query(`GRANT SELECT ON ${db.name}.* TO '${readerUser}'@'%'`);
    return {
      url: db.url,
      readerUser,
      readerPassword: "reporting-password",
      cleanup: async () => {
        await db.admin.query(`DROP USER IF EXISTS '${readerUser}'@'%'`);
        await db.drop();
      },
    };
  },
});
