/**
 * The Aurora cluster (stateful): PostgreSQL by default or MySQL, a writer and readers of one instance
 * class in isolated subnets, never publicly accessible, storage encrypted, IAM database
 * authentication on, credentials generated into Secrets Manager, backups kept, deletion
 * protection configurable. It also tells the gateway how to reach it: the writer URL and the pattern
 * of its instance endpoints for topology discovery.
 */
import { Duration, Fn, RemovalPolicy, aws_ec2 as ec2, aws_rds as rds, type aws_secretsmanager as secretsmanager } from "aws-cdk-lib";
import { Construct } from "constructs";
import type { AuroraEngine } from "./pool-budget.js";

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
    const instance = (name: string, promotionTier: number) =>
      rds.ClusterInstance.provisioned(name, { instanceType, publiclyAccessible: false, promotionTier, enablePerformanceInsights: true });
    this.cluster = new rds.DatabaseCluster(this, "Cluster", {
      engine:
        this.engine === "postgres"
          ? rds.DatabaseClusterEngine.auroraPostgres({ version: rds.AuroraPostgresEngineVersion.VER_16_6 })
          : rds.DatabaseClusterEngine.auroraMysql({ version: rds.AuroraMysqlEngineVersion.VER_3_08_0 }),
      vpc: props.vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
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
