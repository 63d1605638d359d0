/** The idle-to-zero suite (idle-to-zero-suite.ts) on the machine's PostgreSQL, behind the pausing stand-in. */
import { createTestDatabase } from "../../support/postgres.js";
import { defineIdleToZeroSuite } from "./idle-to-zero-suite.js";

defineIdleToZeroSuite({
  name: "PostgreSQL",
  createDatabase: async () => {
    const db = await createTestDatabase();
    return { url: db.url, run: (sql) => db.admin.query(sql), drop: () => db.drop() };
  },
  createArrivals: "create table i35_pause_arrivals (id serial primary key, n int not null)",
});
