/**
 * The Aurora cluster (stateful): PostgreSQL by default or MySQL, a writer and readers of one instance
 * class in isolated subnets, never publicly accessible, storage encrypted, IAM database
 * authentication on, credentials generated into Secrets Manager, backups kept, deletion
 * protection configurable. It also tells the gateway how to reach it: the writer URL and the pattern
 * of its instance endpoints for topology discovery.
 */
import { CfnResource, Duration, Fn, RemovalPolicy, aws_ec2 as ec2, aws_logs as logs, aws_rds as rds, aws_secretsmanager as secretsmanager } from "aws-cdk-lib";
import { Construct } from "constructs";
import { clusterEngine } from "./engine-versions.js";
import type { AuroraEngine } from "./pool-budget.js";

/**
 * The cluster parameter that makes the database refuse a connection without TLS: Aurora PostgreSQL's
 * rds.force_ssl (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/AuroraPostgreSQL.Security.html),
 * Aurora MySQL's require_secure_transport
 * (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/AuroraMySQL.Security.html). Both are
 * dynamic, but a cluster moved onto a new parameter group applies it when its instances restart
 * (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/USER_WorkingWithDBClusterParamGroups.html):
 * docs/deploying.md says when.
 */
export const TLS_REQUIRED: Record<AuroraEngine, Record<string, string>> = {
  postgres: { "rds.force_ssl": "1" },
  mysql: { require_secure_transport: "ON" },
};

export interface PoolgateDatabaseProps {
  vpc: ec2.IVpc;
  /** "postgres" (default) or "mysql". */
  engine?: AuroraEngine;
  /** Instance class without "db.", e.g. "r6g.large" (default). */
  instanceClass?: string;
  /** Reader instances (default 1). */
  readers?: number;
  databaseName?: string;
  /** Default true; false only for throwaway environments. */
  deletionProtection?: boolean;
  backupRetention?: Duration;
  /** How often the database secret is rotated (default 30 days). */
  rotationInterval?: Duration;
  /**
   * Aurora Serverless v2 instances (db.serverless) instead of instanceClass, scaling between these
   * ACUs; minCapacity 0 lets them pause after `secondsUntilAutoPause` (300 by default) with no
   * connection (docs/aurora.md#serverless-v2-auto-pause). Readers stay in promotion tier 1: they pause
   * and resume with the writer.
   */
  serverless?: { minCapacity: number; maxCapacity?: number };
}

export class PoolgateDatabase extends Construct {
  readonly cluster: rds.DatabaseCluster;
  readonly engine: AuroraEngine;
  readonly instanceClass: string;
  /** Reader instances. */
  readonly readers: number;
  readonly deletionProtection: boolean;
  readonly databaseName: string;
  readonly secret: secretsmanager.ISecret;
  readonly port: number;
  /** The cluster's parameter group (TLS required) and the instances' (see the constructor). */
  readonly clusterParameters: rds.ParameterGroup;
  readonly instanceParameters: rds.ParameterGroup;
  /** Serverless v2 with a minimum of 0 ACUs: the instances may pause, and the gateway must let them (idleToZero). */
  readonly mayPause: boolean;

  constructor(scope: Construct, id: string, props: PoolgateDatabaseProps) {
    super(scope, id);
    this.engine = props.engine ?? "postgres";
    this.instanceClass = props.instanceClass ?? "r6g.large";
    this.readers = props.readers ?? 1;
    this.databaseName = props.databaseName ?? "poolgate";
    this.port = this.engine === "postgres" ? 5432 : 3306;
    const deletionProtection = props.deletionProtection ?? true;
    this.deletionProtection = deletionProtection;
    const instanceType = new ec2.InstanceType(this.instanceClass);
    const engine = clusterEngine(this.engine);
    // Parameter groups of our own: a setting changed later is a parameter change, not a swap of the
    // group (which needs every instance rebooted). The cluster's group makes the database itself refuse
    // connections without TLS, whatever a client asks for.
    this.clusterParameters = new rds.ParameterGroup(this, "ClusterParameters", {
      engine,
      description: `Poolgate: the ${this.engine} cluster's settings (TLS required)`,
      parameters: TLS_REQUIRED[this.engine],
    });
    this.instanceParameters = new rds.ParameterGroup(this, "InstanceParameters", {
      engine,
      description: `Poolgate: the ${this.engine} instances' settings`,
    });
    this.mayPause = props.serverless?.minCapacity === 0;
    const serverless = props.serverless;
    const instance = (name: string, promotionTier: number) =>
      serverless !== undefined
        ? rds.ClusterInstance.serverlessV2(name, {
            publiclyAccessible: false,
            // Tier 0-1 readers scale and pause with the writer.
            scaleWithWriter: true,
            enablePerformanceInsights: true,
            parameterGroup: this.instanceParameters,
          })
        : rds.ClusterInstance.provisioned(name, {
        instanceType,
        publiclyAccessible: false,
        promotionTier,
        enablePerformanceInsights: true,
        parameterGroup: this.instanceParameters,
      });
    this.cluster = new rds.DatabaseCluster(this, "Cluster", {
      engine,
      parameterGroup: this.clusterParameters,
      vpc: props.vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
      ...(serverless === undefined ? {} : { serverlessV2MinCapacity: serverless.minCapacity, serverlessV2MaxCapacity: serverless.maxCapacity ?? 16 }),
      writer: instance("writer", 0),
      readers: Array.from({ length: this.readers }, (_, i) => instance(`reader${i + 1}`, 1)),
      credentials: rds.Credentials.fromGeneratedSecret("poolgate_admin"),
      defaultDatabaseName: this.databaseName,
      port: this.port,
      storageEncrypted: true,
      iamAuthentication: true,
      deletionProtection,
      backup: { retention: props.backupRetention ?? Duration.days(7) },
      removalPolicy: deletionProtection ? RemovalPolicy.RETAIN : RemovalPolicy.SNAPSHOT,
      cloudwatchLogsExports: this.engine === "postgres" ? ["postgresql"] : ["error", "slowquery"],
      // RDS creates the exported logs' groups without a retention (kept forever): a month, as the gateway's.
      cloudwatchLogsRetention: logs.RetentionDays.ONE_MONTH,
    });
    if (!this.cluster.secret) throw new Error("the cluster has no generated secret");
    this.secret = this.cluster.secret;
    // Rotated automatically: the gateway reads the secret itself and reads it again (AWSPENDING first,
    // mid-rotation) when the database refuses a login, so running tasks follow a rotation. The rotation
    // function needs the Secrets Manager API, hence subnets with egress.
    this.cluster.addRotationSingleUser({
      automaticallyAfter: props.rotationInterval ?? Duration.days(30),
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
    });
  }

  /**
   * What a cluster kept by `cdk destroy` (RemovalPolicy.RETAIN) still needs, kept with it: the master
   * secret (else nobody can log in to it), its security group and its subnet group. The database
   * stack also keeps the logins' secrets and the network the cluster sits in (docs/operating.md).
   */
  retainWithCluster(): void {
    // The generated master secret (`cluster.secret` is its attachment to the cluster).
    const secrets = this.cluster.node.findAll().filter((child) => child instanceof secretsmanager.CfnSecret);
    const kept = [...secrets, ...[...this.cluster.connections.securityGroups, this.cluster.node.tryFindChild("Subnets")].map((construct) => construct?.node.defaultChild)];
    if (secrets.length !== 1 || kept.some((resource) => !(resource instanceof CfnResource))) throw new Error("the cluster's secret, security group or subnet group is missing");
    for (const resource of kept) (resource as CfnResource).applyRemovalPolicy(RemovalPolicy.RETAIN);
  }

  /**
   * The writer (cluster) endpoint as a gateway URL, without credentials (the gateway reads them from
   * the secret) and without TLS settings (the gateway's `tls` setting covers both engines).
   */
  get writerUrl(): string {
    const scheme = this.engine === "postgres" ? "postgres" : "mysql";
    return `${scheme}://${this.cluster.clusterEndpoint.hostname}:${this.port}/${this.databaseName}`;
  }

  /**
   * Instance endpoints for discovery: "<cluster>.cluster-<hash>.<region>.rds.amazonaws.com" ->
   * "?.<hash>.<region>.rds.amazonaws.com", where ? is an instance's server id.
   */
  get instanceHostPattern(): string {
    return Fn.join("", ["?.", Fn.select(1, Fn.split(".cluster-", this.cluster.clusterEndpoint.hostname))]);
  }
}
