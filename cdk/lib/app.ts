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

const number = (value: string | undefined): number | undefined => (value === undefined ? undefined : Number(value));

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
    network: { maxAzs: number(context("maxAzs")) ?? 2 },
    database: {
      engine,
      instanceClass: context("instanceClass") ?? "r6g.large",
      readers: number(context("readers")) ?? 1,
      deletionProtection: context("deletionProtection") !== "false",
    },
  });
  const poolSize = number(context("poolSize"));
  const service = new PoolgateServiceStack(app, "PoolgateService", {
    env,
    vpc: database.network.vpc,
    database: database.database,
    projectRoot: options.projectRoot,
    gateway: {
      minTasks: number(context("minTasks")) ?? 2,
      maxTasks: number(context("maxTasks")) ?? 6,
      ...(poolSize === undefined ? {} : { poolSize }),
    },
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  acknowledgeFindings(database, service);
  return { app, database, service };
}
