// Lint rules: ESLint's and typescript-eslint's recommended sets, type-aware, plus the house rules
// (no `any`, no non-null assertions at boundaries, no floating promises).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/**", "dist/**", "client/dist/**", "cdk.out/**", ".poolgate-data/**", "coverage/**", "gateway/engines/embedded/pglite-server.mjs"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: { allowDefaultProject: ["eslint.config.js"] }, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["**/*.test.ts", "test/**/*.ts"],
    rules: {
      // Tests read arbitrary JSON bodies.
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      // Async stand-ins that only throw or return are the norm in tests.
      "@typescript-eslint/require-await": "off",
    },
  },
);
