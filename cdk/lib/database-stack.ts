/**
 * The stateful stack: the network, the database (deleted only on purpose), the gateway's own database
 * logins and the schema migrations that create them and the application's tables on every deploy.
 * The service stack depends on this one, so it is deployed after the migrations ran.
 *
 * The engine is chosen here and only here: Aurora PostgreSQL or MySQL (the cluster and the logins'
 * rotated secrets: aurora-target.ts) or Aurora DSQL (the cluster and the gateway's IAM role:
 * dsql-cluster.ts). Everything after sees the choice through database-target.ts.
 */
import { CfnOutput, Fn, Stack, type StackProps } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { PoolgateDatabase, type PoolgateDatabaseProps } from "../constructs/aurora-cluster.js";
import { AuroraTarget } from "../constructs/aurora-target.js";
import { DatabaseLogins } from "../constructs/database-logins.js";
import type { PoolgateDatabaseTarget } from "../constructs/database-target.js";
import { DsqlDatabase } from "../constructs/dsql-cluster.js";
import { PoolgateNetwork, type PoolgateNetworkProps } from "../constructs/network.js";
import type { DatabaseEngine } from "../constructs/pool-budget.js";
import { SchemaMigrations, type SchemaMigrationsProps } from "../constructs/schema-migrations.js";

export interface DatabaseStackProps extends StackProps {
  /** The repository root: the migration function and the default migrations. */
  projectRoot: string;
  network?: PoolgateNetworkProps;
  /** The engine (default postgres) and, for Aurora, the cluster's settings (instanceClass and readers do not apply to DSQL). */
  database?: Omit<PoolgateDatabaseProps, "vpc" | "engine"> & { engine?: DatabaseEngine };
  migrations?: Pick<SchemaMigrationsProps, "migrationsDirectory" | "runId">;
}

export class PoolgateDatabaseStack extends Stack {
  readonly network: PoolgateNetwork;
  /** The database as the gateway, the migrations and the health checks see it. */
  readonly target: PoolgateDatabaseTarget;
  readonly migrations: SchemaMigrations;
  private readonly aurora: AuroraTarget | undefined;
  private readonly dsqlCluster: DsqlDatabase | undefined;

  /** How many zones the network spans (the network's maxAzs). */
  private readonly zoneCount: number;

  constructor(scope: Construct, id: string, props: DatabaseStackProps) {
    super(scope, id, props);
    this.zoneCount = props.network?.maxAzs ?? 2;
    this.network = new PoolgateNetwork(this, "Network", props.network);
    const { engine = "postgres", ...settings } = props.database ?? {};
    if (engine === "dsql") {
      this.dsqlCluster = new DsqlDatabase(this, "Database", {
        network: this.network,
        ...(settings.deletionProtection === undefined ? {} : { deletionProtection: settings.deletionProtection }),
      });
      this.target = this.dsqlCluster;
    } else {
      const database = new PoolgateDatabase(this, "Database", { vpc: this.network.vpc, engine, ...settings });
      const logins = new DatabaseLogins(this, "Logins", { vpc: this.network.vpc, database });
      // A cluster that outlives the stack keeps what it needs to be used again (docs/operating.md).
      if (database.deletionProtection) {
        database.retainWithCluster();
        logins.retainWithCluster();
        this.network.retainDataSubnets();
      }
      this.aurora = new AuroraTarget(database, logins);
      this.target = this.aurora;
    }
    this.migrations = new SchemaMigrations(this, "Migrations", {
      vpc: this.network.vpc,
      database: this.target,
      projectRoot: props.projectRoot,
      ...props.migrations,
    });
    const clusterDescription =
      engine === "dsql" ? "The Aurora DSQL cluster (aws dsql get-cluster --identifier ...)" : "The Aurora cluster (aws rds failover-db-cluster --db-cluster-identifier ...)";
    new CfnOutput(this, "ClusterIdentifier", { value: this.target.clusterIdentifier, description: clusterDescription });
    new CfnOutput(this, "MigrationsLogGroup", { value: this.migrations.logGroup.logGroupName, description: "Logs of the schema-migration runs" });
  }

  /**
   * The zones the VPC spans, as the first `maxAzs` names of Fn::GetAZs. Stack's own answer for a stack
   * without an account is two zones whatever `maxAzs` asks for (it cannot look them up), and with an
   * account it needs a context lookup, which `--no-lookups` forbids: CloudFormation picks the zones at
   * deploy time instead.
   */
  override get availabilityZones(): string[] {
    return Array.from({ length: this.zoneCount }, (_, i) => Fn.select(i, Fn.getAzs()));
  }

  /** The Aurora cluster; throws on an Aurora DSQL stack. */
  get database(): PoolgateDatabase {
    if (!this.aurora) throw new Error("this stack deploys Aurora DSQL: it has no Aurora cluster (see dsql)");
    return this.aurora.database;
  }

  /** The gateway's Aurora logins; throws on an Aurora DSQL stack (its logins are IAM-mapped roles). */
  get logins(): DatabaseLogins {
    if (!this.aurora) throw new Error("this stack deploys Aurora DSQL: it has no password logins (see dsql)");
    return this.aurora.logins;
  }

  /** The Aurora DSQL cluster; throws on an Aurora stack. */
  get dsql(): DsqlDatabase {
    if (!this.dsqlCluster) throw new Error("this stack deploys Aurora: it has no Aurora DSQL cluster (see database)");
    return this.dsqlCluster;
  }
}
