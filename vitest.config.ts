import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["**/*.test.ts"],
    exclude: ["node_modules/**", "dist/**", "client/dist/**", "cdk.out/**"],
    pool: "forks",
    testTimeout: 30000,
    hookTimeout: 60000,
    reporters: ["default"],
  },
});
