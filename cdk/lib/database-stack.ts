/** The stateful stack: the network and the Aurora cluster (deleted only on purpose). */
import { Stack, type StackProps } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { PoolgateDatabase, type PoolgateDatabaseProps } from "../constructs/aurora-cluster.js";
import { PoolgateNetwork, type PoolgateNetworkProps } from "../constructs/network.js";

export interface DatabaseStackProps extends StackProps {
  network?: PoolgateNetworkProps;
  database?: Omit<PoolgateDatabaseProps, "vpc">;
}

export class PoolgateDatabaseStack extends Stack {
  readonly network: PoolgateNetwork;
  readonly database: PoolgateDatabase;

  constructor(scope: Construct, id: string, props: DatabaseStackProps = {}) {
    super(scope, id, props);
    this.network = new PoolgateNetwork(this, "Network", props.network);
    this.database = new PoolgateDatabase(this, "Database", { vpc: this.network.vpc, ...props.database });
  }
}
