/**
 * The network: a VPC over two or three AZs with public subnets (the NAT gateway only), private subnets
 * with egress for the gateway tasks and the Lambda callers, isolated subnets for the database (no
 * route to or from the internet), and flow logs of all traffic.
 */
import { RemovalPolicy, aws_ec2 as ec2, aws_logs as logs } from "aws-cdk-lib";
import { Construct } from "constructs";

export interface PoolgateNetworkProps {
  /** Availability zones: 2 or 3 (default 2). */
  maxAzs?: number;
  /** NAT gateways (default 1; one per AZ for production resilience). */
  natGateways?: number;
}

export class PoolgateNetwork extends Construct {
  readonly vpc: ec2.Vpc;

  constructor(scope: Construct, id: string, props: PoolgateNetworkProps = {}) {
    super(scope, id);
    const flowLogs = new logs.LogGroup(this, "FlowLogs", { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.vpc = new ec2.Vpc(this, "Vpc", {
      maxAzs: props.maxAzs ?? 2,
      natGateways: props.natGateways ?? 1,
      subnetConfiguration: [
        { name: "public", subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 },
        { name: "app", subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 22 },
        { name: "data", subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 24 },
      ],
      flowLogs: { all: { trafficType: ec2.FlowLogTrafficType.ALL, destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogs) } },
    });
  }
}
