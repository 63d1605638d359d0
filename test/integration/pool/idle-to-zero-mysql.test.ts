/** The idle-to-zero suite (idle-to-zero-suite.ts) on the machine's MariaDB (MySQL engine), behind the pausing stand-in. */
import { createTestMysqlDatabase } from "../../support/mysql.js";
import { defineIdleToZeroSuite } from "./idle-to-zero-suite.js";

defineIdleToZeroSuite({
  name: "MariaDB (MySQL engine)",
  createDatabase: async () => {
    const db = await createTestMysqlDatabase();
    return { url: db.url, run: (sql) => db.query(sql), drop: () => db.drop() };
  },
  createArrivals: "create table i35_pause_arrivals (id int auto_increment primary key, n int not null) engine=InnoDB",
});
