import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineCoreSuite } from "./core-suite.js";

defineCoreSuite({
  name: "the embedded PostgreSQL (PGlite)",
  async setup() {
    const dataDir = mkdtempSync(join(tmpdir(), "poolgate-embedded-test-"));
    return { config: { embedded: { dataDir } }, cleanup: async () => rmSync(dataDir, { recursive: true, force: true }) };
  },
});
