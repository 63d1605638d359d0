/**
 * The schema-migration custom resource (CloudFormation, through the CDK provider framework): on every
 * deploy it reads the master user's secret and the gateway's login secrets, connects to the cluster's
 * writer inside the VPC (TLS verified against the Amazon CAs of the Lambda runtime), and runs the
 * migrations of its engine idempotently (migrator.ts). Deleting the resource changes nothing: the
 * schema and the logins stay with the database.
 */
import { fileURLToPath } from "node:url";
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { Tracer } from "@aws-lambda-powertools/tracer";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import { GetSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import middy from "@middy/core";
import type { CloudFormationCustomResourceEvent } from "aws-lambda";
import { z } from "zod";
import type { Credentials, LoginAccess, LoginSpec, MigrationEngine } from "./migration-engine.js";
import { checksumOf, loadMigrations } from "./migration-files.js";
import { type MigrationReport, runMigrations } from "./migrator.js";
import { mysqlMigrationEngine } from "./mysql.js";
import { postgresMigrationEngine } from "./postgres.js";

const env = z
  .object({
    /** Default: migrations/ beside this module (the bundle carries a copy of the project's migrations/). */
    POOLGATE_MIGRATIONS_DIR: z.string().min(1).optional(),
  })
  .parse(process.env);

/** The custom resource's properties (CloudFormation passes every value as a string). */
const propertiesSchema = z.object({
  Engine: z.enum(["postgres", "mysql"]),
  Host: z.string().min(1),
  Port: z.coerce.number().int().min(1).max(65535),
  Database: z.string().min(1),
  Tls: z.enum(["verify-full", "disable"]).default("verify-full"),
  AdminSecretArn: z.string().min(1),
  ReadWriteSecretArn: z.string().min(1),
  ReadOnlySecretArn: z.string().min(1),
});

const secretValueSchema = z.object({ username: z.string().min(1), password: z.string().min(1) });

const logger = new Logger({ serviceName: "poolgate-migrations" });
const tracer = new Tracer({ serviceName: "poolgate-migrations" });
const secrets = tracer.captureAWSv3Client(new SecretsManagerClient({}));
const engines: Record<"postgres" | "mysql", MigrationEngine> = { postgres: postgresMigrationEngine, mysql: mysqlMigrationEngine };

/** A secret's credentials at a staging label, or undefined when no version carries the label. */
async function readSecret(secretArn: string, stage: "AWSCURRENT" | "AWSPENDING"): Promise<Credentials | undefined> {
  try {
    const { SecretString } = await secrets.send(new GetSecretValueCommand({ SecretId: secretArn, VersionStage: stage }));
    return secretValueSchema.parse(JSON.parse(SecretString ?? "{}"));
  } catch (err) {
    if (stage === "AWSPENDING" && err instanceof ResourceNotFoundException) return undefined;
    throw new Error(`cannot read the secret ${secretArn} (${stage}): ${(err as Error).message}`, { cause: err });
  }
}

async function readCurrent(secretArn: string): Promise<Credentials> {
  const credentials = await readSecret(secretArn, "AWSCURRENT");
  if (!credentials) throw new Error(`the secret ${secretArn} has no AWSCURRENT version`);
  return credentials;
}

/** The result the provider framework hands back to CloudFormation. */
export interface CustomResourceResult {
  PhysicalResourceId: string;
  Data?: Record<string, string>;
}

async function onEvent(event: CloudFormationCustomResourceEvent): Promise<CustomResourceResult> {
  const properties = propertiesSchema.parse(event.ResourceProperties);
  const physicalId = `poolgate-migrations/${properties.Database}`;
  if (event.RequestType === "Delete") {
    logger.info("migrations resource deleted; the schema and the logins stay with the database");
    return { PhysicalResourceId: event.PhysicalResourceId };
  }
  const directory = env.POOLGATE_MIGRATIONS_DIR ?? fileURLToPath(new URL(`./migrations/${properties.Engine}/`, import.meta.url));
  const migrations = loadMigrations(directory);
  const [adminCurrent, adminPending, readWrite, readWritePending, readOnly, readOnlyPending] = await Promise.all([
    readCurrent(properties.AdminSecretArn),
    readSecret(properties.AdminSecretArn, "AWSPENDING"),
    readCurrent(properties.ReadWriteSecretArn),
    readSecret(properties.ReadWriteSecretArn, "AWSPENDING"),
    readCurrent(properties.ReadOnlySecretArn),
    readSecret(properties.ReadOnlySecretArn, "AWSPENDING"),
  ]);
  const pending = (current: Credentials, candidate: Credentials | undefined) =>
    candidate && candidate.username === current.username && candidate.password !== current.password ? candidate.password : undefined;
  const report: MigrationReport = await runMigrations({
    engine: engines[properties.Engine],
    settings: { host: properties.Host, port: properties.Port, database: properties.Database, tls: properties.Tls },
    admin: { current: adminCurrent, pending: adminPending },
    logins: [
      loginSpec("read-write", readWrite, pending(readWrite, readWritePending)),
      loginSpec("read-only", readOnly, pending(readOnly, readOnlyPending)),
    ],
    migrations,
    log: (message, details) => logger.info(message, details ?? {}),
  });
  tracer.putAnnotation("migrationsApplied", report.applied.length);
  logger.info("migrations done", { ...report });
  return {
    PhysicalResourceId: physicalId,
    Data: { Applied: report.applied.join(","), Latest: migrations.at(-1)?.version ?? "", Checksum: checksumOf(migrations) },
  };
}

function loginSpec(access: LoginAccess, current: Credentials, pendingPassword: string | undefined): LoginSpec {
  return { access, ...current, ...(pendingPassword === undefined ? {} : { pendingPassword }) };
}

/** The Lambda entry point: Powertools' logger (with the invocation's context) and tracer (a handler segment). */
export const handler = middy(onEvent)
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(captureLambdaHandler(tracer));
