/**
 * How the functions in functions/ are bundled: with the local esbuild (no Docker needed to synth), as
 * ESM for Node 24, minified, with source maps. Shared by the gateway's callers and the migrations.
 */
import type { BundlingOptions } from "aws-cdk-lib/aws-lambda-nodejs";
import { OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";

export function esmBundling(extra: Partial<BundlingOptions> = {}): BundlingOptions {
  return {
    format: OutputFormat.ESM,
    target: "node24",
    minify: true,
    sourceMap: true,
    // ESM bundles of CommonJS dependencies need a require().
    banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    // The AWS SDK v3 comes with the Node.js runtimes (the CDK's default); pg's optional native binding is never used.
    externalModules: ["@aws-sdk/*", "pg-native"],
    ...extra,
  };
}
