/**
 * Builds the Poolgate app: the stateful database stack (network, cluster, logins, migrations) and the
 * stateless service stack, checked by cdk-nag's AwsSolutions rules (a validation plugin: an
 * unacknowledged finding fails synth). Settings come from CDK context (`cdk synth -c engine=mysql
 * -c instanceClass=r6g.xlarge ...`); docs/deploying.md lists them.
 */
import { App, type Environment, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { z } from "zod";
import type { GatewayHttps } from "../constructs/gateway-service.js";
import { EGRESS_MODES, type EgressMode } from "../constructs/network.js";
import type { DatabaseEngine } from "../constructs/pool-budget.js";
import { acknowledgeFindings } from "./nag-acknowledgements.js";
import { PoolgateDatabaseStack } from "./database-stack.js";
import { PoolgateServiceStack, type RoleGrant } from "./service-stack.js";

export interface PoolgateAppOptions {
  projectRoot: string;
  /** Context values (strings), as `-c key=value` passes them. */
  context?: Record<string, string>;
  outdir?: string;
  /** Stacks whose assets are bundled (CDK's `aws:cdk:bundling-stacks`; default all): [] for template-only tests. */
  bundlingStacks?: string[];
}

export interface PoolgateApp {
  app: App;
  database: PoolgateDatabaseStack;
  service: PoolgateServiceStack;
}

/**
 * Behaviour locked in explicitly, the same for `cdk synth` and the in-memory tests. Cross-stack
 * references are weak (the service stack reads the database stack's outputs, Fn::GetStackOutput):
 * a strong export cannot change while another stack imports it, so a changed value (a secret ARN, the
 * cluster endpoint) took two deploys. `-c crossStackReferences=both` is the one-deploy step from a
 * stack deployed with strong references (docs/deploying.md).
 */
const FEATURE_FLAGS = {
  "@aws-cdk/aws-ec2:restrictDefaultSecurityGroup": true,
};
const CROSS_STACK_REFERENCES = ["weak", "both"] as const;

/** A whole-number context setting, or undefined; anything else stops synth with its name. */
function integerSetting(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min) throw new Error(`context ${name} must be a whole number of at least ${min}, not "${value}"`);
  return parsed;
}

/** `grantRoles`: {"<role ARN>": "read-only" | "read-write" | "admin"}. */
const roleGrantsSchema = z.record(z.string(), z.enum(["read-only", "read-write", "admin"]));
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/.+$/;

function roleGrants(value: string | undefined): RoleGrant[] {
  if (value === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Error(`context grantRoles must be JSON such as {"arn:aws:iam::123456789012:role/ci":"read-write"}, not ${value}`);
  }
  const result = roleGrantsSchema.safeParse(parsed);
  if (!result.success) throw new Error(`context grantRoles: ${result.error.issues.map((issue) => `${issue.path.join(".")} ${issue.message}`).join("; ")}`);
  const notRoles = Object.keys(result.data).filter((arn) => !ROLE_ARN.test(arn));
  if (notRoles.length > 0) throw new Error(`context grantRoles: ${notRoles.join(", ")} must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)`);
  return Object.entries(result.data).map(([roleArn, access]) => (access === "admin" ? { roleArn, admin: true } : { roleArn, access }));
}

const CERTIFICATE_ARN = /^arn:aws[a-z-]*:acm(-pca)?:[a-z0-9-]+:\d{12}:certificate\/.+$/;

/** `-c certificateArn` and `-c gatewayDomain`: both (HTTPS) or neither (plain HTTP). */
function httpsSetting(certificateArn: string | undefined, domainName: string | undefined): GatewayHttps | undefined {
  if (certificateArn === undefined && domainName === undefined) return undefined;
  if (certificateArn === undefined || domainName === undefined) throw new Error("context certificateArn and gatewayDomain go together: the certificate's name is the gateway's name in the VPC");
  if (!CERTIFICATE_ARN.test(certificateArn)) throw new Error(`context certificateArn must be an ACM certificate ARN, not "${certificateArn}"`);
  return { certificateArn, domainName };
}

function booleanSetting(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value !== "true" && value !== "false") throw new Error(`context ${name} must be true or false, not "${value}"`);
  return value === "true";
}

/** `-c serverless=true` (with `-c minCapacity`, default 0.5, and `-c maxCapacity`, default 16): Serverless v2 instances; minCapacity 0 lets them pause. */
function serverlessSetting(serverless: string | undefined, min: string | undefined, max: string | undefined): { serverless?: { minCapacity: number; maxCapacity: number } } {
  if (booleanSetting("serverless", serverless) !== true) {
    if (min !== undefined || max !== undefined) throw new Error("context minCapacity and maxCapacity apply to -c serverless=true only");
    return {};
  }
  const acus = (name: string, value: string | undefined, fallback: number): number => {
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || parsed < 0 || parsed > 256 || !Number.isInteger(parsed * 2)) throw new Error(`context ${name} must be ACUs from 0 to 256 in steps of 0.5, not "${value}"`);
    return parsed;
  };
  return { serverless: { minCapacity: acus("minCapacity", min, 0.5), maxCapacity: acus("maxCapacity", max, 16) } };
}

export function buildPoolgateApp(options: PoolgateAppOptions): PoolgateApp {
  const references = options.context?.crossStackReferences ?? "weak";
  if (!(CROSS_STACK_REFERENCES as readonly string[]).includes(references)) throw new Error(`context crossStackReferences must be one of ${CROSS_STACK_REFERENCES.join(", ")}, not "${references}"`);
  const app = new App({
    context: {
      ...FEATURE_FLAGS,
      "@aws-cdk/core:defaultCrossStackReferences": references,
      ...(options.bundlingStacks ? { "aws:cdk:bundling-stacks": options.bundlingStacks } : {}),
      ...options.context,
    },
    ...(options.outdir ? { outdir: options.outdir } : {}),
  });
  const context = (key: string): string | undefined => {
    const value: unknown = app.node.tryGetContext(key);
    if (value === undefined) return undefined;
    return typeof value === "string" ? value : JSON.stringify(value);
  };
  // Region-only environment: no account lookups, and ALB access logs know their region.
  const env: Environment = { region: context("region") ?? process.env.CDK_DEFAULT_REGION ?? "us-east-1" };
  const engine = (context("engine") ?? "postgres") as DatabaseEngine;
  if (engine !== "postgres" && engine !== "mysql" && engine !== "dsql") throw new Error(`context engine must be "postgres", "mysql" or "dsql", not "${String(engine)}"`);
  // Aurora DSQL has no instances: an instance class or readers asked for would be silently ignored.
  for (const auroraOnly of ["instanceClass", "readers", "serverless"]) {
    if (engine === "dsql" && context(auroraOnly) !== undefined) throw new Error(`context ${auroraOnly} applies to Aurora only: Aurora DSQL has no instances (remove -c ${auroraOnly})`);
  }
  const egress = (context("egress") ?? "endpoints") as EgressMode;
  if (!EGRESS_MODES.includes(egress)) throw new Error(`context egress must be one of ${EGRESS_MODES.join(", ")}, not "${String(egress)}"`);
  const readers = integerSetting("readers", context("readers"), 0) ?? 1;
  const migrationsDirectory = context("migrationsDir");
  const migrationRunId = context("migrationRunId");
  const database = new PoolgateDatabaseStack(app, "PoolgateDatabase", {
    env,
    projectRoot: options.projectRoot,
    network: { maxAzs: integerSetting("maxAzs", context("maxAzs"), 2) ?? 2, egress },
    database: {
      engine,
      instanceClass: context("instanceClass") ?? "r6g.large",
      readers,
      deletionProtection: booleanSetting("deletionProtection", context("deletionProtection")) ?? true,
      ...serverlessSetting(context("serverless"), context("minCapacity"), context("maxCapacity")),
    },
    migrations: { ...(migrationsDirectory === undefined ? {} : { migrationsDirectory }), ...(migrationRunId === undefined ? {} : { runId: migrationRunId }) },
  });
  const poolSize = integerSetting("poolSize", context("poolSize"), 1);
  const configureReadOnlyLogin = booleanSetting("readOnlyLogin", context("readOnlyLogin"));
  const notesApiConcurrency = integerSetting("notesApiConcurrency", context("notesApiConcurrency"), 1);
  const https = httpsSetting(context("certificateArn"), context("gatewayDomain"));
  const resultCache = context("cache") ?? "memory";
  if (resultCache !== "memory" && resultCache !== "valkey") throw new Error(`context cache must be "memory" or "valkey", not "${resultCache}"`);
  const tracing = booleanSetting("tracing", context("tracing"));
  const service = new PoolgateServiceStack(app, "PoolgateService", {
    env,
    vpc: database.network.vpc,
    database: database.target,
    projectRoot: options.projectRoot,
    gateway: {
      minTasks: integerSetting("minTasks", context("minTasks"), 1) ?? 2,
      maxTasks: integerSetting("maxTasks", context("maxTasks"), 1) ?? 6,
      ...(poolSize === undefined ? {} : { poolSize }),
      ...(configureReadOnlyLogin === undefined ? {} : { configureReadOnlyLogin }),
      ...(https === undefined ? {} : { https }),
      resultCache,
      ...(tracing === undefined ? {} : { tracing }),
    },
    roleGrants: roleGrants(context("grantRoles")),
    ...(notesApiConcurrency === undefined ? {} : { notesApiConcurrency }),
    callerCidrs: (context("callerCidrs") ?? "").split(",").map((cidr) => cidr.trim()).filter((cidr) => cidr.length > 0),
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  acknowledgeFindings(database, service);
  return { app, database, service };
}
