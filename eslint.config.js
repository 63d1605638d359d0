// Lint rules: ESLint's and typescript-eslint's recommended sets, type-aware, plus the house rules
// (no `any`, no non-null assertions at boundaries, no floating promises).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/**", "dist/**", "client/dist/**", "cdk.out/**", ".poolgate-data/**", "coverage/**", "gateway/engines/embedded/pglite-server.mjs"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: { allowDefaultProject: ["eslint.config.js", ".dependency-cruiser.cjs"] }, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  {
    // Node 20's V8 builds an object literal with a property after a spread (`{ ...options, timeoutMs }`)
    // on its slow path: about 1 µs, and a dictionary-mode object that every later read pays for and the
    // collector promotes (measured in the gateway's hot path, issue 19). Object.assign or the fields
    // spelled out cost ~50 ns. A spread alone, or properties before it, are fast. Held on the code a
    // request runs through (and the client SDK, which runs per call in Lambdas); start-up code may spread.
    files: [
      "gateway/execution/**/*.ts",
      "gateway/http/**/*.ts",
      "gateway/results/**/*.ts",
      "gateway/pool/**/*.ts",
      "gateway/routing/**/*.ts",
      "gateway/idempotency/**/*.ts",
      "gateway/data-api/**/*.ts",
      "gateway/engines/*.ts",
      "gateway/engines/*/connection.ts",
      "gateway/engines/*/*-query.ts",
      "gateway/engines/*/row-cursor.ts",
      "gateway/engines/*/values.ts",
      "gateway/events.ts",
      "gateway/observability/**/*.ts",
      "gateway/tracing/**/*.ts",
      "client/**/*.ts",
    ],
    // The OpenAPI document is built once, at start-up.
    ignores: ["**/*.test.ts", "gateway/http/openapi.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "ObjectExpression > SpreadElement ~ Property",
          message: "A property after a spread takes V8's slow path (~1 µs, a dictionary-mode object): use Object.assign({}, source, { key: value }) or spell the fields out.",
        },
      ],
    },
  },
  {
    files: ["gateway/**/*.ts", "client/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-globals": [
        "error",
        {
          name: "performance",
          message:
            "Node 20 keeps the global `performance` behind a getter that runs on every read (~500 instructions a request): import { performance } from \"node:perf_hooks\".",
        },
      ],
    },
  },
  {
    files: ["**/*.test.ts", "test/**/*.ts", "bench/**/*.ts"],
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
