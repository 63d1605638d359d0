/**
 * The stateful stack: the network, the Aurora cluster (deleted only on purpose), the gateway's own
 * database logins and the schema migrations that create them and the application's tables on every
 * deploy. The service stack depends on this one, so it is deployed after the migrations ran.
 */
import { CfnOutput, Stack, type StackProps } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { PoolgateDatabase, type PoolgateDatabaseProps } from "../constructs/aurora-cluster.js";
import { DatabaseLogins } from "../constructs/database-logins.js";
import { PoolgateNetwork, type PoolgateNetworkProps } from "../constructs/network.js";
import { SchemaMigrations, type SchemaMigrationsProps } from "../constructs/schema-migrations.js";

export interface DatabaseStackProps extends StackProps {
  /** The repository root: the migration function and the default migrations. */
  projectRoot: string;
  network?: PoolgateNetworkProps;
  database?: Omit<PoolgateDatabaseProps, "vpc">;
  migrations?: Pick<SchemaMigrationsProps, "migrationsDirectory" | "runId">;
}

export class PoolgateDatabaseStack extends Stack {
  readonly network: PoolgateNetwork;
  readonly database: PoolgateDatabase;
  readonly logins: DatabaseLogins;
  readonly migrations: SchemaMigrations;

  constructor(scope: Construct, id: string, props: DatabaseStackProps) {
    super(scope, id, props);
    this.network = new PoolgateNetwork(this, "Network", props.network);
    this.database = new PoolgateDatabase(this, "Database", { vpc: this.network.vpc, ...props.database });
    this.logins = new DatabaseLogins(this, "Logins", { vpc: this.network.vpc, database: this.database });
    this.migrations = new SchemaMigrations(this, "Migrations", {
      vpc: this.network.vpc,
      database: this.database,
      logins: this.logins,
      projectRoot: props.projectRoot,
      ...props.migrations,
    });
    new CfnOutput(this, "ClusterIdentifier", { value: this.database.cluster.clusterIdentifier, description: "The Aurora cluster (aws rds failover-db-cluster --db-cluster-identifier ...)" });
    new CfnOutput(this, "MigrationsLogGroup", { value: this.migrations.logGroup.logGroupName, description: "Logs of the schema-migration runs" });
  }
}
