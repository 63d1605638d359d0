/**
 * The Aurora side of the database target: the cluster (aurora-cluster.ts) and the gateway's own
 * password logins (database-logins.ts) as the gateway, the migrations and the health checks see them.
 * The gateway reaches the writer endpoint with topology discovery, logs in from the logins' rotated
 * secrets, verifies TLS against the RDS CA bundle in its image, and is admitted on the cluster's port;
 * the migrations run as the master user; the failover checks watch the cluster's RDS events and metrics.
 */
import { aws_ec2 as ec2, aws_rds as rds, aws_secretsmanager as secretsmanager, type aws_lambda as lambda } from "aws-cdk-lib";
import type { Construct, IConstruct, IDependable } from "constructs";
import type { PoolgateDatabase } from "./aurora-cluster.js";
import type { DatabaseLogins } from "./database-logins.js";
import type { GatewayTask, PoolgateDatabaseTarget, SqlDialect } from "./database-target.js";
import type { AuroraEngine } from "./pool-budget.js";

/** Where the image keeps the RDS certificate authorities (see the Dockerfile). */
export const RDS_CA_BUNDLE = "/etc/ssl/certs/rds-global-bundle.pem";

export class AuroraTarget implements PoolgateDatabaseTarget {
  readonly engine: AuroraEngine;
  readonly dialect: SqlDialect;
  readonly instanceClass: string;
  readonly deletionProtection: boolean;
  readonly clusterIdentifier: string;
  readonly hasNotesTable: boolean;
  readonly topology: { database: PoolgateDatabase; readers: number };
  readonly migrationPrerequisites: IConstruct[];

  constructor(
    readonly database: PoolgateDatabase,
    readonly logins: DatabaseLogins,
  ) {
    this.engine = database.engine;
    this.dialect = database.engine;
    this.instanceClass = database.instanceClass;
    this.deletionProtection = database.deletionProtection;
    this.clusterIdentifier = database.cluster.clusterIdentifier;
    // The example API is written in PostgreSQL's SQL (RETURNING, $n).
    this.hasNotesTable = database.engine === "postgres";
    this.topology = { database, readers: database.readers };
    // The writer must accept connections: the cluster and every instance.
    this.migrationPrerequisites = database.cluster.node.findAll().filter((resource) => resource instanceof rds.CfnDBCluster || resource instanceof rds.CfnDBInstance);
  }

  gatewayTaskRole(): undefined {
    return undefined;
  }

  clusterConfig({ readOnlyLogin }: { readOnlyLogin: boolean }): Record<string, unknown> {
    return {
      writerUrl: this.database.writerUrl,
      discovery: { instanceHostPattern: this.database.instanceHostPattern, refreshIntervalMs: 30000 },
      credentials: { source: "secrets-manager", secretArn: this.logins.readWrite.secret.secretArn },
      ...(readOnlyLogin ? { logins: { readOnly: { source: "secrets-manager", secretArn: this.logins.readOnly.secret.secretArn } } } : {}),
      tls: { mode: "verify-full", caFile: RDS_CA_BUNDLE },
      // Serverless v2 at 0 ACUs: release every session when quiet so that the instances may pause.
      ...(this.database.mayPause ? { idleToZero: { quietMs: 60000, resumeTimeoutMs: 45000 } } : {}),
    };
  }

  admitGateway(scope: Construct, task: GatewayTask, { readOnlyLogin }: { readOnlyLogin: boolean }): void {
    // The task reads its logins' secrets itself, again after a rotation (both staging labels).
    for (const login of readOnlyLogin ? this.logins.all : [this.logins.readWrite]) login.secret.grantRead(task.taskRole);
    const [databaseGroup] = this.database.cluster.connections.securityGroups;
    if (!databaseGroup) throw new Error("the cluster needs a security group");
    // The rule lives in the caller's (stateless) stack: the database stack must not depend on the service's.
    new ec2.CfnSecurityGroupIngress(scope, "DatabaseIngress", {
      groupId: databaseGroup.securityGroupId,
      sourceSecurityGroupId: task.securityGroup.securityGroupId,
      ipProtocol: "tcp",
      fromPort: this.database.port,
      toPort: this.database.port,
      description: "Poolgate gateway tasks",
    });
  }

  migrationProperties(): Record<string, string> {
    return {
      Engine: this.engine,
      Host: this.database.cluster.clusterEndpoint.hostname,
      Port: String(this.database.port),
      Database: this.database.databaseName,
      Tls: "verify-full",
      AdminSecretArn: this.database.secret.secretArn,
      ReadWriteSecretArn: this.logins.readWrite.secret.secretArn,
      ReadOnlySecretArn: this.logins.readOnly.secret.secretArn,
    };
  }

  /** Aurora runs any file (PostgreSQL in one transaction; MySQL statement by statement). */
  checkMigrations(): void {}

  admitMigrations(fn: lambda.Function): void {
    this.database.cluster.connections.allowDefaultPortFrom(fn, "Poolgate schema migrations");
    this.database.secret.grantRead(fn);
    for (const login of this.logins.all) login.secret.grantRead(fn);
  }

  afterMigrations(migrations: IDependable): void {
    // The logins' rotations need the logins; the master secret's first rotation would race the run.
    this.logins.rotateAfter(migrations);
    for (const schedule of this.database.cluster.node.findAll().filter((child) => child instanceof secretsmanager.CfnRotationSchedule)) schedule.node.addDependency(migrations);
  }
}
