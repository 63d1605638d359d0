/**
 * Builds the Poolgate app: the stateful database stack and the stateless service stack, checked by
 * cdk-nag's AwsSolutions rules (a validation plugin: an unacknowledged finding fails synth). Settings
 * come from CDK context (`cdk synth -c engine=mysql -c instanceClass=r6g.xlarge ...`).
 */
import { App, type Environment, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import type { AuroraEngine } from "../constructs/pool-budget.js";
import { acknowledgeFindings } from "./nag-acknowledgements.js";
import { PoolgateDatabaseStack } from "./database-stack.js";
import { PoolgateServiceStack } from "./service-stack.js";

export interface PoolgateAppOptions {
  projectRoot: string;
  /** Context values (strings), as `-c key=value` passes them. */
  context?: Record<string, string>;
  outdir?: string;
}

export interface PoolgateApp {
  app: App;
  database: PoolgateDatabaseStack;
  service: PoolgateServiceStack;
}

/** Behaviour locked in explicitly, the same for `cdk synth` and the in-memory tests. */
const FEATURE_FLAGS = {
  "@aws-cdk/core:defaultCrossStackReferences": "strong",
  "@aws-cdk/aws-ec2:restrictDefaultSecurityGroup": true,
};

/** A whole-number context setting, or undefined; anything else stops synth with its name. */
function integerSetting(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min) throw new Error(`context ${name} must be a whole number of at least ${min}, not "${value}"`);
  return parsed;
}

export function buildPoolgateApp(options: PoolgateAppOptions): PoolgateApp {
  const app = new App({ context: { ...FEATURE_FLAGS, ...options.context }, ...(options.outdir ? { outdir: options.outdir } : {}) });
  const context = (key: string): string | undefined => {
    const value: unknown = app.node.tryGetContext(key);
    if (value === undefined) return undefined;
    return typeof value === "string" ? value : JSON.stringify(value);
  };
  // Region-only environment: no account lookups, and ALB access logs know their region.
  const env: Environment = { region: context("region") ?? process.env.CDK_DEFAULT_REGION ?? "us-east-1" };
  const engine = (context("engine") ?? "postgres") as AuroraEngine;
  if (engine !== "postgres" && engine !== "mysql") throw new Error(`context engine must be "postgres" or "mysql", not "${String(engine)}"`);
  const database = new PoolgateDatabaseStack(app, "PoolgateDatabase", {
    env,
    network: { maxAzs: integerSetting("maxAzs", context("maxAzs"), 2) ?? 2 },
    database: {
      engine,
      instanceClass: context("instanceClass") ?? "r6g.large",
      readers: integerSetting("readers", context("readers"), 0) ?? 1,
      deletionProtection: context("deletionProtection") !== "false",
    },
  });
  const poolSize = integerSetting("poolSize", context("poolSize"), 1);
  const service = new PoolgateServiceStack(app, "PoolgateService", {
    env,
    vpc: database.network.vpc,
    database: database.database,
    projectRoot: options.projectRoot,
    gateway: {
      minTasks: integerSetting("minTasks", context("minTasks"), 1) ?? 2,
      maxTasks: integerSetting("maxTasks", context("maxTasks"), 1) ?? 6,
      ...(poolSize === undefined ? {} : { poolSize }),
    },
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  acknowledgeFindings(database, service);
  return { app, database, service };
}
