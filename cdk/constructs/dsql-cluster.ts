/**
 * The Aurora DSQL target (stateful): a single-Region Aurora DSQL cluster (`-c engine=dsql`), deletion
 * protection configurable, and the gateway's identity — the IAM role its tasks run as, which the
 * schema migrations map to the database roles `poolgate_rw` and `poolgate_ro` with `AWS IAM GRANT`
 * (DSQL has no passwords: the gateway signs a token per session, `{"source": "dsql"}`).
 *
 * What differs from Aurora, and why (Aurora DSQL User Guide):
 * - no instances, readers, subnets or security group of its own: one regional endpoint, TLS on 5432;
 * - the gateway role may `dsql:DbConnect` on this cluster only (custom roles); `dsql:DbConnectAdmin`
 *   (the `admin` role) goes to the migration function alone;
 * - the private subnets reach it through the NAT path at `<id>.dsql.<region>.on.aws`, or, with
 *   `egress: "endpoints"`, through the cluster's PrivateLink connection endpoint (service
 *   `com.amazonaws.<region>.dsql-<suffix>`, private DNS on) at `<id>.dsql-<suffix>.<region>.on.aws`.
 *   The management endpoint (`com.amazonaws.<region>.dsql`) serves the control-plane API, which
 *   nothing in the stack calls at run time;
 * - no failover for the gateway to follow, hence no RDS events or instance alarms.
 */
import { Fn, RemovalPolicy, Stack, aws_dsql as dsql, aws_ec2 as ec2, aws_iam as iam, type aws_lambda as lambda } from "aws-cdk-lib";
import { Construct, type IConstruct } from "constructs";
import type { Migration } from "../../functions/migrate/migration-files.js";
import { dsqlMigrationProblem } from "../../functions/migrate/sql-statements.js";
import type { GatewayTask, PoolgateDatabaseTarget, SqlDialect } from "./database-target.js";
import type { PoolgateNetwork } from "./network.js";

/** DSQL's port and its one database. */
export const DSQL_PORT = 5432;
export const DSQL_DATABASE = "postgres";

export interface DsqlDatabaseProps {
  network: PoolgateNetwork;
  /** Default true; false only for throwaway environments (the cluster is then deleted with the stack). */
  deletionProtection?: boolean;
  /** Database roles the gateway logs in as (default poolgate_rw and poolgate_ro). */
  readWriteRole?: string;
  readOnlyRole?: string;
}

export class DsqlDatabase extends Construct implements PoolgateDatabaseTarget {
  readonly engine = "dsql" as const;
  readonly dialect: SqlDialect = "postgres";
  readonly instanceClass = undefined;
  /** The example notes table uses a serial key, which DSQL has not: the notes API is not deployed. */
  readonly hasNotesTable = false;
  readonly topology = undefined;
  readonly cluster: dsql.CfnCluster;
  readonly deletionProtection: boolean;
  readonly clusterIdentifier: string;
  readonly clusterArn: string;
  /** The host the gateway and the migrations connect to (see the module comment). */
  readonly host: string;
  /** The PrivateLink connection endpoint, with `egress: "endpoints"`. */
  readonly connectionEndpoint: ec2.InterfaceVpcEndpoint | undefined;
  /** The IAM role the gateway's tasks run as: dsql:DbConnect here, mapped to the gateway's database roles. */
  readonly gatewayRole: iam.Role;
  readonly readWriteRole: string;
  readonly readOnlyRole: string;
  readonly migrationPrerequisites: IConstruct[];

  constructor(scope: Construct, id: string, props: DsqlDatabaseProps) {
    super(scope, id);
    this.deletionProtection = props.deletionProtection ?? true;
    this.readWriteRole = props.readWriteRole ?? "poolgate_rw";
    this.readOnlyRole = props.readOnlyRole ?? "poolgate_ro";
    this.cluster = new dsql.CfnCluster(this, "Cluster", { deletionProtectionEnabled: this.deletionProtection });
    // Protected: kept if the stack goes. Unprotected (the teardown path): deleted with it, as asked.
    this.cluster.applyRemovalPolicy(this.deletionProtection ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY);
    this.clusterIdentifier = this.cluster.attrIdentifier;
    this.clusterArn = this.cluster.attrResourceArn;

    // The connection endpoint's service is the cluster's own, on DSQL's port (its security group admits the VPC there).
    const service = new ec2.InterfaceVpcEndpointService(this.cluster.attrVpcEndpointServiceName, DSQL_PORT);
    this.connectionEndpoint = props.network.reachPrivately("Dsql", service);
    const region = Stack.of(this).region;
    this.host = this.connectionEndpoint
      ? // com.amazonaws.<region>.dsql-<suffix> -> <id>.dsql-<suffix>.<region>.on.aws, which private DNS resolves to the endpoint.
        Fn.join(".", [this.clusterIdentifier, Fn.select(3, Fn.split(".", this.cluster.attrVpcEndpointServiceName)), region, "on.aws"])
      : this.cluster.attrEndpoint;
    this.migrationPrerequisites = [this.cluster, ...(this.connectionEndpoint ? [this.connectionEndpoint] : [])];

    this.gatewayRole = new iam.Role(this, "GatewayRole", {
      assumedBy: new iam.ServicePrincipal("ecs-tasks.amazonaws.com"),
      description: "Poolgate gateway tasks: log in to the Aurora DSQL cluster as the gateway's database roles",
    });
    this.gatewayRole.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ["dsql:DbConnect"], resources: [this.clusterArn] }));
  }

  /** The gateway's role, imported into the service stack so that its other grants stay there (no cycle). */
  gatewayTaskRole(scope: Construct): iam.IRole {
    return iam.Role.fromRoleArn(scope, "DsqlGatewayRole", this.gatewayRole.roleArn, { mutable: true });
  }

  clusterConfig({ readOnlyLogin }: { readOnlyLogin: boolean }): Record<string, unknown> {
    const region = Stack.of(this).region;
    // No tls: a DSQL cluster defaults to verify-full against Node's trust store (Amazon Root CA 1), not the RDS bundle.
    return {
      writerUrl: `postgres://${this.host}:${DSQL_PORT}/${DSQL_DATABASE}`,
      credentials: { source: "dsql", username: this.readWriteRole, region },
      ...(readOnlyLogin ? { logins: { readOnly: { source: "dsql", username: this.readOnlyRole, region } } } : {}),
    };
  }

  /** The role already may connect (gatewayTaskRole), and the endpoint needs no security-group rule. */
  admitGateway(_scope: Construct, _task: GatewayTask): void {}

  migrationProperties(): Record<string, string> {
    return {
      Engine: this.engine,
      Host: this.host,
      Port: String(DSQL_PORT),
      Database: DSQL_DATABASE,
      Tls: "verify-full",
      Region: Stack.of(this).region,
      GatewayRoleArn: this.gatewayRole.roleArn,
      ReadWriteRole: this.readWriteRole,
      ReadOnlyRole: this.readOnlyRole,
    };
  }

  /** A file that mixes DDL with anything stops synth here, not the deploy half-way. */
  checkMigrations(migrations: readonly Migration[]): void {
    const problems = migrations.flatMap((migration) => {
      const problem = dsqlMigrationProblem(migration.sql);
      return problem === undefined ? [] : [`${migration.version}_${migration.name}.sql: ${problem}`];
    });
    if (problems.length > 0) throw new Error(`migrations Aurora DSQL cannot run: ${problems.join("; ")}`);
  }

  /** The migrations run as `admin`: the only place that may DbConnectAdmin. */
  admitMigrations(fn: lambda.Function): void {
    fn.addToRolePolicy(new iam.PolicyStatement({ actions: ["dsql:DbConnectAdmin"], resources: [this.clusterArn] }));
  }

  afterMigrations(): void {}
}
