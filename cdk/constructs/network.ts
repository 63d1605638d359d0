/**
 * The network: a VPC over two or three AZs with public subnets (NAT gateways only), private subnets
 * with egress for the gateway tasks and the Lambdas, isolated subnets for the database (no route to
 * or from the internet), and flow logs of all traffic.
 *
 * The failover path must not depend on one zone. What the gateway and its functions call besides the
 * database — Secrets Manager (credentials, again after a rotation), STS (callers' identity proofs), ECR
 * and S3 (image pulls when a task is replaced), CloudWatch Logs (the tasks' logs and EMF metrics) and
 * ECS (the hook and the canary list the gateway's tasks) — is reached either through interface VPC
 * endpoints with a network interface in every zone (`egress: "endpoints"`, the default), or through a
 * NAT gateway in every zone (`"nat-per-az"`). `"single-nat"` is the cost-sensitive choice: one NAT
 * gateway, so losing its zone cuts the other zones off from those services too. A database outside
 * the VPC adds its own endpoint the same way (`reachPrivately`: Aurora DSQL's connection endpoint).
 */
import { CfnResource, RemovalPolicy, aws_ec2 as ec2, aws_logs as logs } from "aws-cdk-lib";
import { Construct } from "constructs";

/** How the private subnets reach AWS services (see the module comment). */
export type EgressMode = "endpoints" | "nat-per-az" | "single-nat";
export const EGRESS_MODES: readonly EgressMode[] = ["endpoints", "nat-per-az", "single-nat"];

/** The AWS services the stack's tasks and functions call, as interface endpoints. */
export const INTERFACE_ENDPOINTS = {
  SecretsManager: ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
  Sts: ec2.InterfaceVpcEndpointAwsService.STS,
  EcrApi: ec2.InterfaceVpcEndpointAwsService.ECR,
  EcrDocker: ec2.InterfaceVpcEndpointAwsService.ECR_DOCKER,
  Logs: ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS,
  Ecs: ec2.InterfaceVpcEndpointAwsService.ECS,
} as const;

export interface PoolgateNetworkProps {
  /** Availability zones: 2 or 3 (default 2). */
  maxAzs?: number;
  /** Default "endpoints" (see the module comment). */
  egress?: EgressMode;
}

export class PoolgateNetwork extends Construct {
  readonly vpc: ec2.Vpc;
  readonly egress: EgressMode;
  /** The interface endpoints, by name (empty unless `egress` is "endpoints"). */
  readonly endpoints: Record<string, ec2.InterfaceVpcEndpoint> = {};

  constructor(scope: Construct, id: string, props: PoolgateNetworkProps = {}) {
    super(scope, id);
    this.egress = props.egress ?? "endpoints";
    if (!EGRESS_MODES.includes(this.egress)) throw new Error(`egress must be one of ${EGRESS_MODES.join(", ")}, not "${String(this.egress)}"`);
    const maxAzs = props.maxAzs ?? 2;
    const flowLogs = new logs.LogGroup(this, "FlowLogs", { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.vpc = new ec2.Vpc(this, "Vpc", {
      maxAzs,
      // With endpoints, the one NAT gateway only carries traffic to the internet, never the failover path.
      natGateways: this.egress === "nat-per-az" ? maxAzs : 1,
      subnetConfiguration: [
        { name: "public", subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 },
        { name: "app", subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 22 },
        { name: "data", subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 24 },
      ],
      flowLogs: { all: { trafficType: ec2.FlowLogTrafficType.ALL, destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogs) } },
    });
    // ECR keeps image layers in S3: a gateway endpoint is free and keeps pulls off the NAT gateways.
    this.vpc.addGatewayEndpoint("S3", { service: ec2.GatewayVpcEndpointAwsService.S3, subnets: [{ subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }] });
    if (this.egress === "endpoints") {
      for (const [name, service] of Object.entries(INTERFACE_ENDPOINTS)) {
        this.addEndpoint(name, service);
      }
    }
  }

  /**
   * Keeps the VPC and its isolated (database) subnets, with their route tables, when the stack is
   * destroyed: a retained cluster's network interfaces stay in them, so CloudFormation could not
   * delete them anyway (the stack's deletion would fail on the VPC). Everything else — public and
   * private subnets, NAT and internet gateways, endpoints, flow logs — is deleted.
   */
  retainDataSubnets(): void {
    const subnets = this.vpc.isolatedSubnets.flatMap((subnet) => subnet.node.children);
    for (const resource of [this.vpc.node.defaultChild, ...subnets]) {
      if (resource instanceof CfnResource) resource.applyRemovalPolicy(RemovalPolicy.RETAIN);
    }
  }

  /**
   * In "endpoints" mode, reaches one more service through an interface endpoint in every zone (private
   * DNS on) and returns it; in the NAT modes, returns undefined: the NAT path already reaches it.
   */
  reachPrivately(name: string, service: ec2.IInterfaceVpcEndpointService): ec2.InterfaceVpcEndpoint | undefined {
    return this.egress === "endpoints" ? this.addEndpoint(name, service) : undefined;
  }

  private addEndpoint(name: string, service: ec2.IInterfaceVpcEndpointService): ec2.InterfaceVpcEndpoint {
    // One network interface per zone, private DNS on: the default hosts resolve to it.
    const endpoint = this.vpc.addInterfaceEndpoint(name, { service, subnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }, privateDnsEnabled: true });
    this.endpoints[name] = endpoint;
    return endpoint;
  }
}
