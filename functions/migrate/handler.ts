/**
 * The schema-migration custom resource (CloudFormation, through the CDK provider framework): on every
 * deploy it connects to the database from inside the VPC (TLS verified against the Amazon CAs of the
 * Lambda runtime) as its administrator and runs the migrations of its engine idempotently
 * (migrator.ts), then the README's grant script (schemas/grants/<engine>.sql, carried in the bundle). Aurora: it reads the master user's secret and the gateway's login secrets and
 * connects to the cluster's writer. Aurora DSQL: it signs a DbConnectAdmin token for `admin` with the
 * function's own role, and maps the gateway's roles to the gateway's IAM role. Deleting the resource
 * changes nothing: the schema and the logins stay with the database.
 */
import { fileURLToPath } from "node:url";
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { Tracer } from "@aws-lambda-powertools/tracer";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import { GetSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { DsqlSigner } from "@aws-sdk/dsql-signer";
import middy from "@middy/core";
import type { CloudFormationCustomResourceEvent } from "aws-lambda";
import { z } from "zod";
import { dsqlMigrationEngine } from "./dsql.js";
import { loadGrantScript } from "./grant-script.js";
import type { ConnectionSettings, Credentials, LoginAccess, LoginSpec, MigrationEngine } from "./migration-engine.js";
import { checksumOf, loadMigrations, type Migration } from "./migration-files.js";
import { type MigrationReport, type MigrationRun, runMigrations } from "./migrator.js";
import { mysqlMigrationEngine } from "./mysql.js";
import { postgresMigrationEngine } from "./postgres.js";

const env = z
  .object({
    /** Default: migrations/ beside this module (the bundle carries a copy of the project's migrations/). */
    POOLGATE_MIGRATIONS_DIR: z.string().min(1).optional(),
    /** Default: grants/ beside this module (the bundle carries a copy of the project's schemas/grants/). */
    POOLGATE_GRANTS_DIR: z.string().min(1).optional(),
  })
  .parse(process.env);

/** Where to connect, whatever the engine (CloudFormation passes every value as a string). */
const connectionFields = {
  Host: z.string().min(1),
  Port: z.coerce.number().int().min(1).max(65535),
  Database: z.string().min(1),
  Tls: z.enum(["verify-full", "disable"]).default("verify-full"),
};

/** The custom resource's properties: Aurora's secrets, or Aurora DSQL's region, gateway role and role names. */
const propertiesSchema = z.discriminatedUnion("Engine", [
  z.object({
    Engine: z.enum(["postgres", "mysql"]),
    ...connectionFields,
    AdminSecretArn: z.string().min(1),
    ReadWriteSecretArn: z.string().min(1),
    ReadOnlySecretArn: z.string().min(1),
  }),
  z.object({
    Engine: z.literal("dsql"),
    ...connectionFields,
    Region: z.string().min(1),
    GatewayRoleArn: z.string().regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/.+$/),
    ReadWriteRole: z.string().min(1),
    ReadOnlyRole: z.string().min(1),
  }),
]);
type AuroraProperties = Extract<z.infer<typeof propertiesSchema>, { Engine: "postgres" | "mysql" }>;
type DsqlProperties = Extract<z.infer<typeof propertiesSchema>, { Engine: "dsql" }>;

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
  const settings: ConnectionSettings = { host: properties.Host, port: properties.Port, database: properties.Database, tls: properties.Tls };
  const log: MigrationRun["log"] = (message, details) => logger.info(message, details ?? {});
  const run = properties.Engine === "dsql" ? await dsqlRun(properties, settings, migrations) : await auroraRun(properties, settings, migrations);
  const report: MigrationReport = await runMigrations({ ...run, log });
  tracer.putAnnotation("migrationsApplied", report.applied.length);
  logger.info("migrations done", { ...report });
  return {
    PhysicalResourceId: physicalId,
    Data: { Applied: report.applied.join(","), Latest: migrations.at(-1)?.version ?? "", Checksum: checksumOf(migrations) },
  };
}

/** Aurora: the master user and the logins from their secrets (AWSPENDING too, mid-rotation). */
async function auroraRun(properties: AuroraProperties, settings: ConnectionSettings, migrations: Migration[]): Promise<MigrationRun> {
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
  return {
    engine: engines[properties.Engine],
    settings,
    admin: { current: adminCurrent, pending: adminPending },
    logins: [
      loginSpec("read-write", readWrite, pending(readWrite, readWritePending)),
      loginSpec("read-only", readOnly, pending(readOnly, readOnlyPending)),
    ],
    migrations,
    grantScript: loadGrantScript(env.POOLGATE_GRANTS_DIR ?? fileURLToPath(new URL("./grants/", import.meta.url)), properties.Engine),
  };
}

/**
 * Aurora DSQL: `admin` with a DbConnectAdmin token signed by the function's role (valid 15 minutes,
 * checked only at login), and the gateway's roles, which have no password.
 */
async function dsqlRun(properties: DsqlProperties, settings: ConnectionSettings, migrations: Migration[]): Promise<MigrationRun> {
  const token = await new DsqlSigner({ hostname: properties.Host, region: properties.Region }).getDbConnectAdminAuthToken();
  const role = (access: LoginAccess, username: string): LoginSpec => ({ access, username, password: "" });
  return {
    engine: dsqlMigrationEngine(properties.GatewayRoleArn),
    settings,
    admin: { current: { username: "admin", password: token } },
    logins: [role("read-write", properties.ReadWriteRole), role("read-only", properties.ReadOnlyRole)],
    migrations,
    // DSQL's grants are its engine's own (dsql.ts): no GRANT on other roles' functions, no MySQL.
    grantScript: undefined,
  };
}

function loginSpec(access: LoginAccess, current: Credentials, pendingPassword: string | undefined): LoginSpec {
  return { access, ...current, ...(pendingPassword === undefined ? {} : { pendingPassword }) };
}

/** The Lambda entry point: Powertools' logger (with the invocation's context) and tracer (a handler segment). */
export const handler = middy(onEvent)
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(captureLambdaHandler(tracer));
