import { createTestDatabase } from "../../support/postgres.js";
import { defineCoreSuite, onLocalServer, POSTGRES_DIALECT } from "./core-suite.js";

defineCoreSuite({
  name: "the local PostgreSQL server",
  dialect: POSTGRES_DIALECT,
  // A real PostgreSQL server, not the embedded one.
  version: { matches: /^PostgreSQL \d+/, notContaining: "PGlite" },
  setup: onLocalServer(createTestDatabase),
});
