import { createTestMysqlDatabase } from "../../support/mysql.js";
import { defineCoreSuite, MYSQL_DIALECT, onLocalServer } from "./core-suite.js";

defineCoreSuite({
  name: "the local MariaDB server (MySQL engine)",
  dialect: MYSQL_DIALECT,
  // A real MariaDB or MySQL server.
  version: { matches: /^\d+\.\d+\.\d+/ },
  setup: onLocalServer(createTestMysqlDatabase),
});
