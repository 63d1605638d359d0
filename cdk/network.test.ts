/**
 * The network's failover path: by default every AWS service the tasks and functions call has an
 * interface endpoint in every zone (and S3 a gateway endpoint for ECR's layers); -c egress=nat-per-az
 * puts a NAT gateway in every zone instead; -c egress=single-nat is the cost-sensitive single NAT.
 * Each mode passes cdk-nag.
 */
import { Match, Template } from "aws-cdk-lib/assertions";
import { afterAll, describe, expect, it } from "vitest";
import { INTERFACE_ENDPOINTS } from "./constructs/network.js";
import { build, buildTemplates, removeBuilds } from "./test-support.js";

afterAll(removeBuilds);

function synthesised(context: Record<string, string>): Template {
  // Templates and cdk-nag only: the functions' bundles are not what these tests read.
  const app = buildTemplates(context);
  app.app.synth();
  return Template.fromStack(app.database);
}

const privateSubnets = (template: Template) =>
  Object.entries(template.findResources("AWS::EC2::Subnet"))
    .filter(([, subnet]) => (subnet.Properties.Tags as { Key: string; Value: string }[]).some((tag) => tag.Key === "aws-cdk:subnet-type" && tag.Value === "Private"))
    .map(([id]) => ({ Ref: id }));

describe("the network", () => {
  it("reaches Secrets Manager, STS, ECR, CloudWatch Logs and ECS through interface endpoints in every zone by default, and S3 through a gateway endpoint", () => {
    const template = synthesised({});
    const subnets = privateSubnets(template);
    expect(subnets).toHaveLength(2);
    const interfaces = Object.values(template.findResources("AWS::EC2::VPCEndpoint", { Properties: { VpcEndpointType: "Interface" } }));
    expect(interfaces).toHaveLength(Object.keys(INTERFACE_ENDPOINTS).length);
    const services = interfaces.map((endpoint) => JSON.stringify(endpoint.Properties.ServiceName));
    for (const service of ["secretsmanager", "sts", "ecr.api", "ecr.dkr", "logs", "ecs"]) expect(services.some((name) => name.endsWith(`.${service}"`) || name.includes(`.${service}"`))).toBe(true);
    for (const endpoint of interfaces) {
      expect(endpoint.Properties.PrivateDnsEnabled).toBe(true);
      expect(endpoint.Properties.SubnetIds).toEqual(expect.arrayContaining(subnets));
      expect(endpoint.Properties.SubnetIds).toHaveLength(subnets.length);
    }
    template.hasResourceProperties("AWS::EC2::VPCEndpoint", { VpcEndpointType: "Gateway", ServiceName: Match.objectLike({ "Fn::Join": Match.arrayWith([Match.arrayWith([".s3"])]) }) });
    // The one NAT gateway carries internet traffic only: no AWS API on the failover path needs it.
    template.resourceCountIs("AWS::EC2::NatGateway", 1);
  }, 60000);

  it("puts a NAT gateway in every zone with -c egress=nat-per-az", () => {
    const template = synthesised({ egress: "nat-per-az" });
    template.resourceCountIs("AWS::EC2::NatGateway", 2);
    template.resourceCountIs("AWS::EC2::VPCEndpoint", 1);
    // Each private subnet routes to the NAT gateway of its own zone.
    const natRoutes = Object.values(template.findResources("AWS::EC2::Route", { Properties: { NatGatewayId: Match.anyValue() } }));
    expect(new Set(natRoutes.map((route) => JSON.stringify(route.Properties.NatGatewayId))).size).toBe(2);
  }, 60000);

  it("keeps one NAT gateway and no interface endpoints with -c egress=single-nat, and refuses an unknown mode", () => {
    const template = synthesised({ egress: "single-nat" });
    template.resourceCountIs("AWS::EC2::NatGateway", 1);
    template.resourceCountIs("AWS::EC2::VPCEndpoint", 1);
    expect(() => build({ egress: "vpn" })).toThrow(/context egress must be one of endpoints, nat-per-az, single-nat/);
  }, 60000);
});
