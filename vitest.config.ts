import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/** The client's package names resolve to its sources, as tsconfig.json's paths say. */
const source = (file: string) => fileURLToPath(new URL(`./client/${file}`, import.meta.url));

/**
 * Tests that need real servers live in test/integration/; everything else (tests beside the code in
 * gateway/, client/, functions/, schemas/, tools/, bench/) starts no server and is the `unit` loop.
 * Tests are sorted by these globs, never by moving files: a new file lands in a project by where it is.
 */
const INTEGRATION = "test/integration/**/*.test.ts";
/**
 * Minutes-long tests: failover drills, fuzzing, the browser, and the CDK app's synthesis (no server, but
 * each synth bundles every Lambda function with esbuild: minutes on a loaded machine).
 */
const SLOW = [
  "cdk/**/*.test.ts",
  "test/integration/**/failover-*.test.ts",
  "test/integration/**/fuzz-*.test.ts",
  "test/integration/**/status-page.test.ts",
];
const EXCLUDE = ["node_modules/**", "dist/**", "client/dist/**", "cdk.out/**"];

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@poolgate\/client$/, replacement: source("index.ts") },
      { find: /^@poolgate\/client\/iam$/, replacement: source("iam.ts") },
      { find: /^@poolgate\/client\/data-api$/, replacement: source("data-api.ts") },
    ],
  },
  test: {
    exclude: EXCLUDE,
    pool: "forks",
    testTimeout: 30000,
    hookTimeout: 60000,
    reporters: ["default"],
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["**/*.test.ts"], exclude: [...EXCLUDE, INTEGRATION, ...SLOW] },
      },
      {
        extends: true,
        test: { name: "integration", include: [INTEGRATION], exclude: [...EXCLUDE, ...SLOW] },
      },
      {
        extends: true,
        test: { name: "slow", include: SLOW },
      },
    ],
  },
});
