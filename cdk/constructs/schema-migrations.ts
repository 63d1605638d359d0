/**
 * Schema migrations as part of the deployment: a custom resource whose function (functions/migrate/)
 * runs the versioned SQL of the cluster's engine on every deploy, idempotently, as the administrator
 * (Aurora: the master user, read from its secret; Aurora DSQL: `admin`, with a token) from inside the
 * VPC. It also creates the gateway's own logins and grants them their access (Aurora: database-logins.ts,
 * setting a login's password again from its secret when the two have drifted apart; DSQL: roles mapped
 * to the gateway's IAM role with `AWS IAM GRANT`). What differs per engine comes from the target
 * (database-target.ts).
 *
 * Ordering: the resource waits for the database (Aurora: the cluster and all its instances) and for
 * the logins' secrets; the logins' rotations wait for it (their first run must find the login); and the service stack — the
 * gateway, the canary and the example functions — depends on this stack, so it is deployed after the
 * migrations have run: the gateway's tasks start with their logins in place and new code meets the new
 * schema, never the old one.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { CustomResource, Duration, RemovalPolicy, aws_ec2 as ec2, aws_lambda as lambda, aws_logs as logs } from "aws-cdk-lib";
import { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import { Provider } from "aws-cdk-lib/custom-resources";
import { Construct } from "constructs";
import type { MigrationTarget } from "./database-target.js";
import { loadMigrations } from "../../functions/migrate/migration-files.js";
import { esmBundling } from "./function-bundling.js";

export interface SchemaMigrationsProps {
  vpc: ec2.IVpc;
  database: MigrationTarget;
  /** The repository root (the handler and package-lock.json). */
  projectRoot: string;
  /**
   * A directory with `postgres/`, `mysql/` and `dsql/` subdirectories (only the engine's is read) of `<version>_<name>.sql` files
   * (default: functions/migrate/migrations, the example functions' tables).
   */
  migrationsDirectory?: string;
  /**
   * Changes on every synth by default (the synth time), so that CloudFormation runs the migrations on
   * every deploy; pass a fixed value (a commit id) for reproducible templates.
   */
  runId?: string;
}

/** SHA-256 over the engine's migration files (names and contents): shown in the template, so a diff names the change. */
function checksumOfDirectory(directory: string): string {
  const hash = createHash("sha256");
  for (const name of readdirSync(directory).sort()) {
    const path = join(directory, name);
    if (statSync(path).isFile()) hash.update(`${name}\n`).update(readFileSync(path));
  }
  return hash.digest("hex");
}

export class SchemaMigrations extends Construct {
  readonly function: NodejsFunction;
  readonly resource: CustomResource;
  readonly migrationsDirectory: string;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: SchemaMigrationsProps) {
    super(scope, id);
    const { database } = props;
    this.migrationsDirectory = props.migrationsDirectory ?? join(props.projectRoot, "functions/migrate/migrations");
    const engineDirectory = join(this.migrationsDirectory, database.engine);
    let checksum: string;
    try {
      checksum = checksumOfDirectory(engineDirectory);
    } catch (err) {
      throw new Error(`the migrations directory ${engineDirectory} cannot be read: ${(err as Error).message}`, { cause: err });
    }
    database.checkMigrations(loadMigrations(engineDirectory));

    const logGroup = new logs.LogGroup(this, "Logs", { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.logGroup = logGroup;
    this.function = new NodejsFunction(this, "Function", {
      entry: join(props.projectRoot, "functions/migrate/handler.ts"),
      handler: "handler",
      projectRoot: props.projectRoot,
      depsLockFilePath: join(props.projectRoot, "package-lock.json"),
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 512,
      timeout: Duration.minutes(14),
      // One run at a time (the engine's lock would serialise them anyway).
      reservedConcurrentExecutions: 1,
      vpc: props.vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      environment: {
        POWERTOOLS_SERVICE_NAME: "poolgate-migrations",
        NODE_OPTIONS: "--enable-source-maps",
        // Node 20+ Lambda runtimes trust the Amazon CAs (RDS included) only when told to.
        NODE_EXTRA_CA_CERTS: "/var/runtime/ca-cert.pem",
      },
      bundling: esmBundling({
        // Bundled with the AWS SDK it was built with: the DSQL signer is not part of the runtime's SDK.
        externalModules: ["pg-native"],
        // The SQL files travel beside the bundle: migrations/<engine>/*.sql, and the README's grant
        // scripts (grants/<engine>.sql), which every run applies after the migrations.
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (_inputDir: string, outputDir: string) => [
            `cp -R "${this.migrationsDirectory}" "${outputDir}/migrations"`,
            `cp -R "${join(props.projectRoot, "schemas/grants")}" "${outputDir}/grants"`,
          ],
        },
      }),
    });
    database.admitMigrations(this.function);

    const provider = new Provider(this, "Provider", {
      onEventHandler: this.function,
      logGroup: new logs.LogGroup(this, "ProviderLogs", { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY }),
    });
    this.resource = new CustomResource(this, "Resource", {
      serviceToken: provider.serviceToken,
      resourceType: "Custom::PoolgateSchemaMigrations",
      properties: {
        ...database.migrationProperties(),
        MigrationsChecksum: checksum,
        RunId: props.runId ?? new Date().toISOString(),
      },
    });
    // After the database accepts connections. (The secrets come first through the properties' references.)
    for (const resource of database.migrationPrerequisites) this.resource.node.addDependency(resource);
    database.afterMigrations(this.resource);
  }
}
