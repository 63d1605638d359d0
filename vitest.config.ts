import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/** The client's package names resolve to its sources, as tsconfig.json's paths say. */
const source = (file: string) => fileURLToPath(new URL(`./client/${file}`, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@poolgate\/client$/, replacement: source("index.ts") },
      { find: /^@poolgate\/client\/iam$/, replacement: source("iam.ts") },
      { find: /^@poolgate\/client\/data-api$/, replacement: source("data-api.ts") },
    ],
  },
  test: {
    include: ["**/*.test.ts"],
    exclude: ["node_modules/**", "dist/**", "client/dist/**", "cdk.out/**"],
    pool: "forks",
    testTimeout: 30000,
    hookTimeout: 60000,
    reporters: ["default"],
  },
});
